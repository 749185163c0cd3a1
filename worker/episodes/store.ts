// Listening state in the database: one row per episode, its registers and its one pending change. Every
// method is one transaction; identity matching (guid, then media key, within the podcast) happens here.
import { SyncError } from '../../src/errors.ts';
import type { PendingEpisode, StoredEpisode, SyncDatabase } from '../../src/schema.ts';
import type { EpisodeFilter, EpisodeRef, EpisodeState, ErrorInfo } from '../../src/types.ts';
import type { PlayAction } from '../gpodder/episode-wire.ts';
import { holdOver } from '../hold.ts';
import type { StoreCore } from '../store/core.ts';
import { renamedFeeds } from '../store/feed-moves.ts';
import { episodeIndex, mediaKey, matchEpisode } from './identity.ts';
import { applyChange, changedAt, fromPlay, type EpisodeFields, type FieldChange } from './register.ts';

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
}

const FIELDS = ['position', 'total', 'played'] as const;
/** The `meta` key of the episode pull's cursor. */
const CURSOR = 'episodeCursor';

/** Where the episode pull stands: the last answer's timestamp (server seconds), the last full reconcile (device ms). */
export interface EpisodeCursor {
  cursor?: number;
  reconciledAt?: number;
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
 * A local change as it is recorded: played sets the position to the end (which must be known: `invalid`
 * otherwise), unplayed to 0, a position past the length is the length; undefined when it changes nothing
 * (marking what already holds: no upload).
 */
function settledChange(row: StoredEpisode, given: FieldChange): FieldChange | undefined {
  const change = { ...given };
  const total = change.total ?? row.total?.value;
  if (change.played === true) {
    if (total === undefined) throw new SyncError('invalid', "markPlayed(ref, true) needs the episode's length: call setProgress with a total first");
    change.position = total;
  }
  if (change.played === false) change.position = 0;
  if (change.position !== undefined && total !== undefined && change.position > total) change.position = total;
  const holds = (key: keyof FieldChange) => change[key] === undefined || row[key]?.value === change[key];
  if (change.played !== undefined && row.played && holds('played') && holds('position') && holds('total')) return undefined;
  return change;
}

/** Whether newer values hold every field the pending change set: it is overtaken and must not be sent. */
export function overtaken(row: StoredEpisode, pending: PendingEpisode): boolean {
  return pending.fields.every((key) => (row[key]?.at ?? 0) > pending.at);
}

/** The store's listening-state part. */
export function createEpisodeStore({ db, transact }: StoreCore) {
  const tables = (table: SyncDatabase['episodes']) => [table];

  /** The stored row an incoming ref is (guid first, then media key, within its podcast). */
  async function find(ref: { podcast: string; media: string; guid?: string }): Promise<StoredEpisode | undefined> {
    const direct = await db.episodes.get(idFor(ref.podcast, ref.guid, ref.media));
    return direct ?? matchEpisode(ref, await db.episodes.where('podcast').equals(ref.podcast).toArray());
  }

  /** A new row, or the row with the ref's identity folded in (a guid learned, the newest enclosure URL). */
  function identify(row: StoredEpisode | undefined, ref: EpisodeRef, media: string): StoredEpisode {
    if (!row) {
      const fresh: StoredEpisode = { id: idFor(ref.podcast, ref.guid, media), podcast: ref.podcast, episode: ref.episode, media };
      if (ref.guid !== undefined) fresh.guid = ref.guid;
      return fresh;
    }
    const next = { ...row, episode: ref.episode, media };
    if (ref.guid !== undefined) next.guid = ref.guid;
    return next;
  }

  return {
    /** One episode's state. */
    async episode(ref: EpisodeRef): Promise<EpisodeState | undefined> {
      const row = await transact('r', tables(db.episodes), () => find({ ...ref, media: mediaKey(ref.episode) }));
      return row && episodeState(row);
    },

    /** Listening states, newest change first. */
    async episodes(filter: EpisodeFilter = {}): Promise<EpisodeState[]> {
      const since = filter.changedSince === undefined ? undefined : Date.parse(filter.changedSince);
      const rows = await transact('r', tables(db.episodes), () =>
        filter.podcast === undefined ? db.episodes.toArray() : db.episodes.where('podcast').equals(filter.podcast).toArray(),
      );
      return rows
        .filter((row) => since === undefined || changedAt(row) > since)
        .map(episodeState)
        .sort((a, b) => b.changedAt.localeCompare(a.changedAt) || a.episode.localeCompare(b.episode));
    },

    /**
     * Record a local change made at `wall` (device time, sent to the server; `now` is the engine's steady time,
     * which waits are measured in), stamped newer than anything the row holds (a device clock behind
     * another device's must not make the listener's own seek lose), and queue it: one pending change per row.
     */
    async recordLocal(ref: EpisodeRef, local: LocalEpisodeChange, wall: number, now: number, interval: number): Promise<StoredEpisode> {
      const media = mediaKey(ref.episode);
      return transact('rw', tables(db.episodes), async () => {
        const row = identify(await find({ ...ref, media }), ref, media);
        const change = settledChange(row, local.change);
        if (!change) return row;
        // Wire times are whole seconds: the change must be newer than what the row holds after that rounding too.
        const at = Math.max(wall, (Math.floor(changedAt(row) / 1000) + 1) * 1000);
        const next = withFields(row, applyChange(fieldsOf(row), change, at));
        const keys = FIELDS.filter((key) => change[key] !== undefined);
        const held = row.pending;
        next.pending = {
          version: (held?.version ?? 0) + 1,
          at,
          fields: [...new Set([...(held?.fields ?? []), ...keys])],
          attempts: held?.attempts ?? 0,
        };
        delete next.error;
        // Progress waits out the interval since this episode's last upload (never longer, whatever the clock did).
        const throttledUntil = next.sentAt === undefined || next.sentAt > now ? now : Math.min(next.sentAt + interval, now + interval);
        const due = local.throttled ? Math.max(now, throttledUntil) : now;
        next.due = row.due === undefined ? due : Math.min(row.due, due);
        next.heldAt = now;
        await db.episodes.put(next);
        return next;
      });
    },

    /** Where the episode pull stands. */
    async cursor(): Promise<EpisodeCursor> {
      const value = await transact('r', [db.meta], async () => (await db.meta.get(CURSOR))?.value as Record<string, unknown> | undefined);
      const out: EpisodeCursor = {};
      if (typeof value?.cursor === 'number') out.cursor = value.cursor;
      if (typeof value?.reconciledAt === 'number') out.reconciledAt = value.reconciledAt;
      return out;
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
          const media = mediaKey(action.episode);
          const ref: EpisodeRef = { podcast: action.podcast, episode: action.episode };
          if (action.guid !== undefined) ref.guid = action.guid;
          const row = index.find({ ...ref, media });
          const fields = fieldsOf(row ?? ({} as StoredEpisode));
          const merged = applyChange(fields, fromPlay(action.position ?? 0, action.total), action.at);
          if (row && changedAt(merged) === changedAt(fields) && FIELDS.every((k) => merged[k] === fields[k])) continue;
          // A remote action does not rename a row the app knows (its ref must keep finding it): only a guid is learned.
          let next = row ? { ...row } : identify(undefined, ref, media);
          if (row && row.guid === undefined && ref.guid !== undefined) next.guid = ref.guid;
          next = withFields(next, merged);
          if (next.pending && overtaken(next, next.pending)) {
            delete next.pending;
            delete next.due;
            delete next.heldAt;
          }
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

    /**
     * Rows with a pending change due by `now` (every pending one when flushing), oldest change first. A wait set
     * after `now` (the clock stepped back) is over rather than stretched.
     */
    async due(now: number, flush: boolean): Promise<StoredEpisode[]> {
      const rows = await transact('r', tables(db.episodes), () => db.episodes.where('due').aboveOrEqual(-Infinity).toArray());
      return rows.filter((r) => r.pending && (flush || holdOver(r.due, r.heldAt, now))).sort((a, b) => a.pending!.at - b.pending!.at);
    },

    /** The earliest due time of a pending change whose feed `eligible` allows (for the push timer). */
    async nextDue(eligible: (podcast: string) => boolean, now: number): Promise<number | undefined> {
      return transact('r', tables(db.episodes), async () => {
        let next: number | undefined;
        await db.episodes.where('due').aboveOrEqual(-Infinity).each((row) => {
          if (row.due === undefined || !eligible(row.podcast)) return;
          const at = holdOver(row.due, row.heldAt, now) ? now : row.due;
          if (next === undefined || at < next) next = at;
        });
        return next;
      });
    },

    /** Settle uploads: the server took them (`error` absent), refused them for good, or they wait until `retryAt`. */
    async settle(uploads: readonly EpisodeUpload[], now: number, interval: number, outcome: { error?: ErrorInfo; retryAt?: number }): Promise<EpisodeRef[]> {
      return transact('rw', tables(db.episodes), async () => {
        const rows = await db.episodes.bulkGet(uploads.map((u) => u.row.id));
        const out: StoredEpisode[] = [];
        rows.forEach((row, i) => {
          if (!row?.pending) return;
          const next: StoredEpisode = { ...row };
          const same = row.pending.version === uploads[i]!.version;
          if (outcome.retryAt !== undefined) {
            next.pending = { ...row.pending, attempts: row.pending.attempts + 1 };
            if (outcome.error) next.pending.lastError = outcome.error;
            next.due = outcome.retryAt;
            next.heldAt = now;
          } else if (same) {
            delete next.pending;
            delete next.due;
            delete next.heldAt;
            if (outcome.error) next.error = outcome.error;
            else next.sentAt = now;
          } else {
            // Edited while it was on its way: the newer version goes after the interval (or a flush).
            next.sentAt = now;
            next.due = Math.max(row.due ?? now, now + interval);
            next.heldAt = now;
          }
          out.push(next);
        });
        if (out.length) await db.episodes.bulkPut(out);
        return out.map(episodeRef);
      });
    },

    /** Every stored episode's ref (what a wipe changes). */
    async allRefs(): Promise<EpisodeRef[]> {
      return transact('r', tables(db.episodes), async () => (await db.episodes.toArray()).map(episodeRef));
    },

    /** How many episodes have a change waiting. */
    pendingCount(): Promise<number> {
      return transact('r', tables(db.episodes), () => db.episodes.where('due').aboveOrEqual(-Infinity).count());
    },
  };
}

/** The listening-state part of the store. */
export type EpisodeStore = ReturnType<typeof createEpisodeStore>;
