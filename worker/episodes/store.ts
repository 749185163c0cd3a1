// Listening state in the database: one row per episode, its registers and its one pending change. Every
// method is one transaction; identity matching (guid, then media key, within the podcast) happens here.
import { SyncError } from '../../src/errors.ts';
import type { PendingEpisode, StoredEpisode, SyncDatabase } from '../../src/schema.ts';
import type { EpisodeFilter, EpisodeRef, EpisodeState, ErrorInfo } from '../../src/types.ts';
import type { PlayAction } from './actions.ts';
import { holdOver } from '../hold.ts';
import type { StoreCore } from '../store/core.ts';
import { renamedFeeds } from '../store/feed-moves.ts';
import { matchEpisode } from '../../src/episode-identity.ts';
import { episodeIndex, mediaKey } from './identity.ts';
import { applyChange, changedAt, fromPlay, type EpisodeFields, type FieldChange, type FieldKey } from './register.ts';
import { withSent } from './upload-play.ts';

/** A local change to record: the fields, and whether it may wait for the progress interval. */
export interface LocalEpisodeChange {
  change: FieldChange;
  /** Progress waits out the interval since the last upload; a played mark goes at the next push. */
  throttled: boolean;
}

/** What a pending episode upload carries: the row as read, and the version it had. */
export interface EpisodeUpload {
  row: StoredEpisode;
  version: number;
  /** The enclosure URL sent, when the server's answer rewrote it ... */
  sent?: string;
  /** ... to this one, which the row stores (and sends) from then on. */
  renamed?: string;
}

const FIELDS = ['position', 'total', 'played'] as const;
/** The `meta` key of the episode pull's cursor. */
const CURSOR = 'episodeCursor';

/** Where the episode pull stands: the last answer's timestamp (server seconds), the last full reconcile (device ms). */
export interface EpisodeCursor {
  cursor?: number;
  reconciledAt?: number;
  /** That reconcile was refused as too large: a server reset does not ask for everything before the interval is over. */
  capped?: true;
}

/** The app's view of a row. */
export function episodeState(row: StoredEpisode): EpisodeState {
  const state: EpisodeState = {
    podcast: row.podcast,
    episode: row.episode,
    played: row.played?.value ?? false,
    changedAt: new Date(changedAt(row)).toISOString(),
    pending: row.pending !== undefined,
  };
  if (row.guid !== undefined) state.guid = row.guid;
  if (row.position) state.position = row.position.value;
  if (row.total) state.total = row.total.value;
  if (row.error) state.error = row.error;
  return state;
}

/** The ref the app knows a row by. */
export function episodeRef(row: StoredEpisode): EpisodeRef {
  return row.guid === undefined ? { podcast: row.podcast, episode: row.episode } : { podcast: row.podcast, episode: row.episode, guid: row.guid };
}

/** A row's key: its feed URL and its guid (or media key when it has none) when it was created or moved there. */
export const idFor = (podcast: string, guid: string | undefined, media: string) => `${podcast}\n${guid === undefined ? `m:${media}` : `g:${guid}`}`;

function fieldsOf(row: StoredEpisode): EpisodeFields {
  const fields: EpisodeFields = {};
  for (const key of FIELDS) if (row[key]) (fields as Record<string, unknown>)[key] = row[key];
  return fields;
}

function withFields(row: StoredEpisode, fields: EpisodeFields): StoredEpisode {
  const next = { ...row };
  for (const key of FIELDS) {
    if (fields[key]) (next as Record<string, unknown>)[key] = fields[key];
    else delete next[key];
  }
  return next;
}

/**
 * A local change as it is recorded, a `play` like any other (register.ts `fromPlay`): progress keeps the last
 * known total when given none, is clamped to it and is played when it reached it (short of it, it un-plays);
 * played sets the position to the total (given with it, else known: `invalid` otherwise), unplayed to 0. Undefined
 * when it changes nothing (marking what already holds: no upload).
 */
function settledChange(row: StoredEpisode, given: FieldChange): FieldChange | undefined {
  const total = given.total ?? row.total?.value;
  if (given.played === true) {
    if (total === undefined) throw new SyncError('invalid', "markPlayed(ref, true) needs the episode's length: call setProgress with a total first");
    if (row.played?.value === true && row.position?.value === total && (given.total === undefined || row.total?.value === total)) return undefined;
    return given.total === undefined ? { played: true, position: total } : { played: true, position: total, total };
  }
  if (given.played === false) {
    if (row.played?.value === false && (row.position?.value ?? 0) === 0) return undefined;
    return { played: false, position: 0 };
  }
  return fromPlay(given.position ?? 0, given.total, row.total?.value);
}

/** The pending change without the fields a remote value just replaced; undefined once none is left (overtaken: never sent). */
function pendingLeft(pending: PendingEpisode, replaced: readonly FieldKey[]): PendingEpisode | undefined {
  const fields = pending.fields.filter((key) => !replaced.includes(key));
  if (!fields.length) return undefined;
  return fields.length === pending.fields.length ? pending : { ...pending, fields };
}

/** `row` with no change waiting. */
function unqueued(row: StoredEpisode): void {
  delete row.pending;
  delete row.due;
  delete row.heldAt;
}

/** Whether newer values hold every field the pending change set: it is overtaken and must not be sent. */
export function overtaken(row: StoredEpisode, pending: PendingEpisode): boolean {
  return pending.fields.every((key) => (row[key]?.at ?? 0) > pending.at);
}

/** The stored row an incoming ref is (guid first, then media key, within its podcast). */
async function findRow(db: SyncDatabase, ref: EpisodeRef): Promise<StoredEpisode | undefined> {
  const direct = await db.episodes.get(idFor(ref.podcast, ref.guid, mediaKey(ref.episode)));
  return direct ?? matchEpisode(ref, await db.episodes.where('podcast').equals(ref.podcast).toArray());
}

/** A new row, or the row with the ref's identity folded in (a guid learned, the newest enclosure URL). */
function identify(row: StoredEpisode | undefined, ref: EpisodeRef, media: string): StoredEpisode {
  if (!row) {
    const fresh: StoredEpisode = { id: idFor(ref.podcast, ref.guid, media), podcast: ref.podcast, episode: ref.episode, media };
    if (ref.guid !== undefined) fresh.guid = ref.guid;
    return fresh;
  }
  // The URL the server rewrote stays what is stored and sent while the app names the one it replaced.
  const next = ref.episode === row.renamedFrom ? { ...row } : { ...row, episode: ref.episode, media };
  if (next.episode !== row.episode) delete next.renamedFrom;
  if (ref.guid !== undefined) next.guid = ref.guid;
  return next;
}

/**
 * `row` with a local change made at `wall` (device time; `now` is the engine's steady time) queued: one pending
 * change per row, due now or (progress) once the interval since the last upload is over. Undefined when it
 * changes nothing.
 */
function queueLocal(row: StoredEpisode, local: LocalEpisodeChange, wall: number, now: number, interval: number): StoredEpisode | undefined {
  const change = settledChange(row, local.change);
  if (!change) return undefined;
  const applied = applyChange(fieldsOf(row), change, wall, () => true);
  if (!applied.changed.length) return undefined;
  const next = withFields(row, applied.fields);
  const held = row.pending;
  next.pending = {
    version: (held?.version ?? 0) + 1,
    // The stamp it goes with: the newest of the changes it carries (a device clock that stepped back must not
    // send a queued change under an older time than it was made at).
    at: Math.max(held?.at ?? wall, wall),
    fields: [...new Set([...(held?.fields ?? []), ...applied.changed])],
    attempts: held?.attempts ?? 0,
  };
  // Where this stretch began: the position before the first change not yet uploaded.
  const from = held ? held.from : row.position?.value;
  if (from !== undefined) next.pending.from = from;
  const urgent = local.throttled ? held?.urgent : next.pending.version;
  if (urgent !== undefined) next.pending.urgent = urgent;
  delete next.error;
  // Progress waits out the interval since this episode's last upload (never longer, whatever the clock did).
  const throttledUntil = next.sentAt === undefined || next.sentAt > now ? now : Math.min(next.sentAt + interval, now + interval);
  const due = local.throttled ? Math.max(now, throttledUntil) : now;
  next.due = row.due === undefined ? due : Math.min(row.due, due);
  next.heldAt = now;
  return next;
}

/** `row` (undefined: none yet) with a pulled `play` action folded in; undefined when it changes nothing there. */
function foldAction(row: StoredEpisode | undefined, action: PlayAction, ref: EpisodeRef): StoredEpisode | undefined {
  const fields = fieldsOf(row ?? ({} as StoredEpisode));
  // In the same second a pending local change wins; otherwise the remote one does (the later in the answer).
  const pendingFields = row?.pending?.fields ?? [];
  const applied = applyChange(fields, fromPlay(action.position ?? 0, action.total, fields.total?.value), action.at, (key) => !pendingFields.includes(key));
  if (row && !applied.changed.length) return undefined;
  // A remote action does not rename a row the app knows (its ref must keep finding it): only a guid is learned.
  let next = row ? { ...row } : identify(undefined, ref, mediaKey(ref.episode));
  if (row && row.guid === undefined && ref.guid !== undefined) next.guid = ref.guid;
  next = withFields(next, applied.fields);
  // A refusal is shown until the episode's next change, local or remote: a remote one newer than all it
  // held is one (an older action that only fills in a field the row lacked is not).
  if (action.at > changedAt(fields)) delete next.error;
  if (next.pending) {
    const left = pendingLeft(next.pending, applied.changed);
    if (left) next.pending = left;
    else unqueued(next);
  }
  return next;
}

/** What an upload's outcome leaves of a pending row (see `settle`). */
function settleRow(row: StoredEpisode & { pending: PendingEpisode }, upload: EpisodeUpload, now: number, interval: number, outcome: { error?: ErrorInfo; retryAt?: number; serverHold?: number }): StoredEpisode {
  // Whatever the outcome, the server may hold this pair now: it is never sent again (upload-play.ts).
  const next: StoredEpisode = { ...row, sent: withSent(row.sent, upload.row) };
  if (outcome.retryAt !== undefined) {
    next.pending = { ...row.pending, attempts: row.pending.attempts + 1 };
    if (outcome.error) next.pending.lastError = outcome.error;
    // A 5xx adds to the run of them; another answer ends it; no answer at all (no status) leaves it.
    const serverErrors = outcome.error?.code === 'server' ? (row.pending.serverErrors ?? 0) + 1 : outcome.error?.status === undefined ? row.pending.serverErrors : 0;
    if (serverErrors) next.pending.serverErrors = serverErrors;
    else delete next.pending.serverErrors;
    if (outcome.serverHold !== undefined) next.pending.serverHold = outcome.serverHold;
    else delete next.pending.serverHold;
    next.due = outcome.retryAt;
    next.heldAt = now;
  } else if (row.pending.version === upload.version) {
    unqueued(next);
    if (outcome.error) next.error = outcome.error;
    else next.sentAt = now;
  } else {
    // Edited while it was on its way: the newer version goes after the interval (or a flush), unless a part
    // of it does not wait for the interval (a played mark made meanwhile): that goes at the next push.
    next.pending = { ...row.pending };
    delete next.pending.serverErrors;
    next.sentAt = now;
    next.due = (row.pending.urgent ?? 0) > upload.version ? Math.min(row.due ?? now, now) : Math.max(row.due ?? now, now + interval);
    next.heldAt = now;
  }
  // The server stores the episode under the URL its answer named: found and sent by it from then on (unless
  // the app gave another one since).
  if (outcome.retryAt === undefined && upload.renamed !== undefined && row.episode === upload.sent) {
    next.episode = upload.renamed;
    next.media = mediaKey(upload.renamed);
    next.renamedFrom = upload.sent;
  }
  return next;
}

/** Reading listening state: each method one transaction. */
function episodeReads({ db, transact }: StoreCore) {
  return {
    /** One episode's state. */
    async episode(ref: EpisodeRef): Promise<EpisodeState | undefined> {
      const row = await transact('r', [db.episodes], () => findRow(db, ref));
      return row && episodeState(row);
    },

    /** Listening states, newest change first. */
    async episodes(filter: EpisodeFilter = {}): Promise<EpisodeState[]> {
      const since = filter.changedSince === undefined ? undefined : Date.parse(filter.changedSince);
      const rows = await transact('r', [db.episodes], () =>
        filter.podcast === undefined ? db.episodes.toArray() : db.episodes.where('podcast').equals(filter.podcast).toArray(),
      );
      // By the time as a number: a collation compare of each pair of ISO strings was most of a long list's read.
      return rows
        .map((row) => ({ at: changedAt(row), row }))
        .filter(({ at }) => since === undefined || at > since)
        .sort((a, b) => b.at - a.at || a.row.episode.localeCompare(b.row.episode))
        .map(({ row }) => episodeState(row));
    },

    /** Where the episode pull stands. */
    async cursor(): Promise<EpisodeCursor> {
      const value = await transact('r', [db.meta], async () => (await db.meta.get(CURSOR))?.value as Record<string, unknown> | undefined);
      const out: EpisodeCursor = {};
      if (typeof value?.cursor === 'number') out.cursor = value.cursor;
      if (typeof value?.reconciledAt === 'number') out.reconciledAt = value.reconciledAt;
      if (value?.capped === true) out.capped = true;
      return out;
    },

    /**
     * The pending changes of feeds `eligible` allows that an upload at `now` carries, oldest change first: none
     * until one is due, then every one not held by the server (a backoff or the progress interval delays an
     * upload, not what it carries: progress riding along saves its own upload later); every one when flushing. A
     * wait set after `now` (the clock stepped back) is over rather than stretched.
     */
    async due(now: number, flush: boolean, eligible: (podcast: string) => boolean): Promise<StoredEpisode[]> {
      const rows = await transact('r', [db.episodes], () => db.episodes.where('due').aboveOrEqual(-Infinity).toArray());
      const pending = rows.filter((r) => r.pending && eligible(r.podcast));
      if (!flush && !pending.some((r) => holdOver(r.due, r.heldAt, now))) return [];
      return pending.filter((r) => flush || holdOver(r.pending!.serverHold, r.heldAt, now)).sort((a, b) => a.pending!.at - b.pending!.at);
    },

    /** The earliest due time of a pending change whose feed `eligible` allows (for the push timer). */
    async nextDue(eligible: (podcast: string) => boolean, now: number): Promise<number | undefined> {
      return transact('r', [db.episodes], async () => {
        let next: number | undefined;
        await db.episodes.where('due').aboveOrEqual(-Infinity).each((row) => {
          if (row.due === undefined || !eligible(row.podcast)) return;
          const at = holdOver(row.due, row.heldAt, now) ? now : row.due;
          if (next === undefined || at < next) next = at;
        });
        return next;
      });
    },

    /** Every stored episode's ref (what a wipe changes). */
    async allRefs(): Promise<EpisodeRef[]> {
      return transact('r', [db.episodes], async () => (await db.episodes.toArray()).map(episodeRef));
    },

    /** How many episodes have a change waiting. */
    pendingCount(): Promise<number> {
      return transact('r', [db.episodes], () => db.episodes.where('due').aboveOrEqual(-Infinity).count());
    },

  };
}

/** Writing listening state: a local change, pulled actions, an upload's outcome; each one transaction over the parts above. */
function episodeWrites({ db, transact }: StoreCore) {
  return {
    /**
     * Record a local change made at `wall` (device time, the stamp it is sent with; `now` is the engine's steady
     * time, which waits are measured in) and queue it: one pending change per row. It wins every field whose
     * value is from its second or before (the listener just made it); a field holding a value from a later
     * second keeps it (another device's newer change, or a stamp from the future, taken as stamped), and a change
     * that wins nothing queues nothing.
     */
    async recordLocal(ref: EpisodeRef, local: LocalEpisodeChange, wall: number, now: number, interval: number): Promise<StoredEpisode> {
      const media = mediaKey(ref.episode);
      return transact('rw', [db.episodes, db.aliases, db.subscriptions], async () => {
        // A feed URL a subscription moved away from names its episode under the new one, as a pulled action does
        // (an app still holding the old URL; a move the server refused, rolled back).
        const podcast = (await renamedFeeds(db, [ref.podcast])).get(ref.podcast);
        if (podcast) ref = { ...ref, podcast };
        const row = identify(await findRow(db, ref), ref, media);
        const next = queueLocal(row, local, wall, now, interval);
        if (!next) return row;
        await db.episodes.put(next);
        return next;
      });
    },

    /**
     * Fold pulled `play` actions in, and the pull's new cursor with them, in one transaction. Returns the refs
     * whose state changed.
     */
    async applyRemote(actions: readonly PlayAction[], cursor?: EpisodeCursor): Promise<EpisodeRef[]> {
      return transact('rw', [db.episodes, db.meta, db.aliases, db.subscriptions], async () => {
        // An action under a feed URL a subscription moved away from is about its episode under the new one
        // (another device still on the old URL, an upload made before the move read again).
        const moved = await renamedFeeds(db, [...new Set(actions.map((a) => a.podcast))]);
        if (moved.size) actions = actions.map((a) => (moved.has(a.podcast) ? { ...a, podcast: moved.get(a.podcast)! } : a));
        // Every row of the podcasts named, in one read, matched in memory (one awaited read per action made a
        // first sync of 10,000 states three times slower than writing them).
        const podcasts = [...new Set(actions.map((a) => a.podcast))];
        const index = episodeIndex(podcasts.length ? await db.episodes.where('podcast').anyOf(podcasts).toArray() : []);
        const byId = new Map<string, StoredEpisode>();
        for (const action of actions) {
          const ref: EpisodeRef = { podcast: action.podcast, episode: action.episode };
          if (action.guid !== undefined) ref.guid = action.guid;
          const row = index.find(ref);
          const next = foldAction(row, action, ref);
          if (!next) continue;
          byId.set(next.id, next);
          // Later actions of this batch must find the row as it is now (a new one, or one that learned its guid).
          index.put(next, row);
        }
        const rows = [...byId.values()];
        if (rows.length) await db.episodes.bulkPut(rows);
        if (cursor) await db.meta.put({ key: CURSOR, value: cursor });
        return rows.map(episodeRef);
      });
    },

    /** Settle uploads: the server took them (`error` absent), refused them for good, or they wait until `retryAt`. */
    async settle(uploads: readonly EpisodeUpload[], now: number, interval: number, outcome: { error?: ErrorInfo; retryAt?: number; serverHold?: number }): Promise<EpisodeRef[]> {
      return transact('rw', [db.episodes], async () => {
        const rows = await db.episodes.bulkGet(uploads.map((u) => u.row.id));
        const out: StoredEpisode[] = [];
        rows.forEach((row, i) => {
          if (row?.pending) out.push(settleRow(row as StoredEpisode & { pending: PendingEpisode }, uploads[i]!, now, interval, outcome));
        });
        if (out.length) await db.episodes.bulkPut(out);
        return out.map(episodeRef);
      });
    },
  };
}

/** The store's listening-state part. */
export function createEpisodeStore(core: StoreCore) {
  return { ...episodeReads(core), ...episodeWrites(core) };
}

/** The listening-state part of the store. */
export type EpisodeStore = ReturnType<typeof createEpisodeStore>;
