// The in-memory side of a unit of work: what it read, what it changed, and the lookups every step uses.
import type { StoredChange, StoredSubscription, SyncDatabase } from '../../src/schema.ts';
import type { EpisodeRef } from '../../src/types.ts';

export const MAX_HOPS = 64;

/**
 * What a unit of work reports of the feed URLs it moved (old → new), inside its transaction: whatever belongs to
 * those feeds on a floor above the store (listening state, see episodes/move.ts) is re-keyed there, and the
 * episodes moved come back. The engine wires it; the store imports nothing above itself.
 */
export type FeedsMoved = (db: SyncDatabase, moves: ReadonlyMap<string, string>) => Promise<EpisodeRef[]>;

/** What one unit of work holds: rows and aliases as read (`original`) and as edited, queued changes per row. */
export interface WorksetState {
  readonly db: SyncDatabase;
  /** Keys known to be in neither the rows nor the aliases table (not read). */
  readonly absent: (key: string) => boolean;
  /** Told of the feeds `flush` moved (none: nothing follows them). */
  readonly feedsMoved: FeedsMoved | undefined;
  /** Whether a queued change written is held in a page's last copy (see `FeedMoveHooks.copy`). */
  readonly copying: (change: StoredChange) => boolean;
  readonly rows: Map<string, StoredSubscription | null>;
  readonly original: Map<string, StoredSubscription | null>;
  readonly aliases: Map<string, string | null>;
  readonly aliasDirty: Set<string>;
  readonly byRow: Map<string, StoredChange[]>;
  readonly changeDirty: Map<number, StoredChange>;
  readonly changeDeleted: Set<number>;
  readonly newChanges: StoredChange[];
  readonly touched: Set<string>;
  /** Keys of the rows and aliases written by `flush`. */
  writtenKeys: string[];
  /** Episodes `flush` moved with their feed (old refs and new). */
  readonly movedEpisodes: EpisodeRef[];
}

/** An empty unit of work over `db`. */
export function createWorksetState(db: SyncDatabase, absent: (key: string) => boolean, feedsMoved?: FeedsMoved, copying: (change: StoredChange) => boolean = () => false): WorksetState {
  return {
    db,
    absent,
    feedsMoved,
    copying,
    rows: new Map(),
    original: new Map(),
    aliases: new Map(),
    aliasDirty: new Set(),
    byRow: new Map(),
    changeDirty: new Map(),
    changeDeleted: new Set(),
    newChanges: [],
    touched: new Set(),
    writtenKeys: [],
    movedEpisodes: [],
  };
}

function missing(what: string, key: string): Error {
  return new Error(`opa-sync internal error: ${what} ${key} was not preloaded`);
}

/** Follow aliases to the guid the row is keyed by now (every link must have been preloaded). */
export function resolve(st: WorksetState, guid: string): string {
  let current = guid;
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    const next = st.aliases.get(current);
    if (next === undefined) throw missing('alias', current);
    if (next === null || next === guid) return current;
    current = next;
  }
  return current;
}

/** The row at a key (it must have been preloaded). */
export function row(st: WorksetState, key: string): StoredSubscription | undefined {
  if (!st.rows.has(key)) throw missing('row', key);
  return st.rows.get(key) ?? undefined;
}

/** The queued changes of a row, oldest first. */
export function changes(st: WorksetState, key: string): StoredChange[] {
  const list = st.byRow.get(key);
  if (!list) throw missing('changes of', key);
  return list;
}

/** Replace a row (null deletes it) and remember it was touched. */
export function setRow(st: WorksetState, key: string, value: StoredSubscription | null): void {
  if (!st.original.has(key)) st.original.set(key, null);
  st.rows.set(key, value);
  st.touched.add(key);
  if (!st.byRow.has(key)) st.byRow.set(key, []);
  // A key in use is current: it must not alias elsewhere (that would make a cycle). A key whose alias was
  // never read (a re-key target nothing preloaded) gets a delete anyway: it costs nothing when absent.
  if (value && st.aliases.get(key) !== null) unalias(st, key);
}

/** Record that `from` was replaced by `to`. */
export function alias(st: WorksetState, from: string, to: string): void {
  if (from === to) return;
  st.aliases.set(from, to);
  st.aliasDirty.add(from);
  // Re-keying back (to → … → from existed): `to` is current again, so its own alias would make a cycle.
  if (st.aliases.has(to) && resolveLoaded(st, to) === from) unalias(st, to);
}

/** Make `guid` its own key again: it no longer leads to the row it aliased to. */
export function unalias(st: WorksetState, guid: string): void {
  st.aliases.set(guid, null);
  st.aliasDirty.add(guid);
}

/** Follow the aliases loaded so far (unknown links end the walk). */
export function resolveLoaded(st: WorksetState, guid: string): string {
  let current = guid;
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    const next = st.aliases.get(current);
    if (next === undefined || next === null || next === guid) return current;
    current = next;
  }
  return current;
}

/** Remember a queued change as new or edited. */
export function markChange(st: WorksetState, change: StoredChange): void {
  if (change.id === undefined) {
    if (!st.newChanges.includes(change)) st.newChanges.push(change);
  } else {
    st.changeDirty.set(change.id, change);
  }
}
