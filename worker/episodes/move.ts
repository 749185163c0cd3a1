// A feed URL rewrite moves the feed's listening state with it: episodes are stored under the feed URL the local
// view shows (`podcast`), so when a subscription's feed URL changes (a local move, the server's rewrite, a
// refused move rolled back) its episodes are re-keyed under the new URL in the same transaction, merging into
// rows already there by the identity rule (identity.ts).
import type { PendingEpisode, StoredEpisode, SyncDatabase } from '../../src/schema.ts';
import type { EpisodeRef } from '../../src/types.ts';
import { episodeIndex } from './identity.ts';
import { changedAt } from './register.ts';
import { episodeRef, idFor, overtaken } from './store.ts';

const FIELDS = ['position', 'total', 'played'] as const;

type AnyRegister = { value: number | boolean; at: number };

/** The newer of two registers (both this store's: on equal times the greater value, so the merge is symmetric). */
function newer(a: AnyRegister | undefined, b: AnyRegister | undefined): AnyRegister | undefined {
  if (!a || !b) return a ?? b;
  return b.at > a.at || (b.at === a.at && b.value > a.value) ? b : a;
}

/**
 * One pending change standing for the two rows' (either may have none): every field either set, the later
 * time, a version above both (an upload of either in flight is not this change: its acknowledgement must not
 * clear it), the earlier due time.
 */
function mergePending(target: StoredEpisode, moved: StoredEpisode): Pick<StoredEpisode, 'due' | 'heldAt'> & { pending: PendingEpisode } {
  const held = [target, moved].filter((r) => r.pending);
  const pendings = held.map((r) => r.pending!);
  const pending: PendingEpisode = {
    version: Math.max(...pendings.map((p) => p.version)) + 1,
    at: Math.max(...pendings.map((p) => p.at)),
    fields: [...new Set(pendings.flatMap((p) => p.fields))],
    attempts: Math.max(...pendings.map((p) => p.attempts)),
  };
  const lastError = pendings.find((p) => p.lastError)?.lastError;
  if (lastError) pending.lastError = lastError;
  if (pendings.some((p) => p.urgent !== undefined)) pending.urgent = pending.version;
  const first = held.reduce((a, b) => ((b.due ?? Infinity) < (a.due ?? Infinity) ? b : a));
  return { pending, due: first.due, heldAt: first.heldAt };
}

/** Two rows that are one episode under one feed: each field's newer register, the newer identity, one pending change. */
function mergeRows(target: StoredEpisode, moved: StoredEpisode): StoredEpisode {
  // The enclosure URL of the row changed last is the newest one (what is stored and sent).
  const latest = changedAt(moved) > changedAt(target) ? moved : target;
  const next: StoredEpisode = { ...target, episode: latest.episode, media: latest.media };
  if (next.guid === undefined && moved.guid !== undefined) next.guid = moved.guid;
  const registers = next as unknown as Record<string, AnyRegister | undefined>;
  for (const key of FIELDS) {
    const value = newer(target[key], moved[key]);
    if (value) registers[key] = value;
  }
  delete next.pending;
  delete next.due;
  delete next.heldAt;
  delete next.error;
  if (target.pending || moved.pending) {
    const { pending, due, heldAt } = mergePending(target, moved);
    // The other row's newer values may hold every field it set: then it is overtaken and never sent.
    if (!overtaken(next, pending)) {
      next.pending = pending;
      if (due !== undefined) next.due = due;
      if (heldAt !== undefined) next.heldAt = heldAt;
    }
  }
  // A refusal stays shown while no later change of the episode is waiting (the rule a new change follows).
  if (!next.pending && latest.error) next.error = latest.error;
  const sentAt = Math.max(target.sentAt ?? -Infinity, moved.sentAt ?? -Infinity);
  if (sentAt !== -Infinity) next.sentAt = sentAt;
  return next;
}

/**
 * Move the episodes of each feed URL in `moves` (old → new) to its new URL, inside the caller's transaction
 * (which must include the `episodes` table). All moves are made at once, so a chain or a swap in one
 * transaction (a→b, b→c) moves each feed's episodes exactly one step. A moved row gets the key of its new feed
 * (a pending change keeps pending; an upload of it in flight under the old URL finds no row to settle, so the
 * change is sent again, under the new URL); a row matching one already under the new URL merges into it.
 * Returns the refs that changed: each moved episode under its old URL and under its new one.
 */
export async function moveEpisodes(db: SyncDatabase, moves: ReadonlyMap<string, string>): Promise<EpisodeRef[]> {
  if (!moves.size) return [];
  const urls = [...new Set([...moves.keys(), ...moves.values()])];
  const rows = await db.episodes.where('podcast').anyOf(urls).toArray();
  const leaving = rows.filter((r) => moves.has(r.podcast));
  if (!leaving.length) return [];
  const staying = rows.filter((r) => !moves.has(r.podcast));
  const index = episodeIndex(staying);
  // Keys in use once the leaving rows are gone: a moved row never takes another's.
  const taken = new Set(staying.map((r) => r.id));
  const placed = new Map<string, StoredEpisode>();
  const refs: EpisodeRef[] = [];
  for (const row of leaving) {
    refs.push(episodeRef(row));
    const moved: StoredEpisode = { ...row, podcast: moves.get(row.podcast)! };
    const match = index.find(moved);
    let next: StoredEpisode;
    if (match) {
      next = mergeRows(match, moved);
    } else {
      const id = idFor(moved.podcast, moved.guid, moved.media);
      let free = id;
      for (let n = 2; taken.has(free); n++) free = `${id}\n${n}`;
      next = { ...moved, id: free };
    }
    taken.add(next.id);
    index.put(next, match);
    placed.set(next.id, next);
  }
  // In this order inside the transaction: a row moving into a key another row leaves is written after the delete.
  await db.episodes.bulkDelete(leaving.map((r) => r.id));
  await db.episodes.bulkPut([...placed.values()]);
  return [...refs, ...[...placed.values()].map(episodeRef)];
}
