// A unit of work inside one Dexie transaction: the rows, aliases and queued changes an edit may touch are
// read in a few bulk requests (`preload`), edited synchronously in memory (so a page of entries that touch
// each other stays consistent), then written in bulk (`flush`). Staying synchronous between requests also
// keeps the IndexedDB transaction alive: a long chain of awaits can let it commit early.
import type { SyncDatabase } from '../../src/schema.ts';
import { createRow, deleteChange, putChange, setBase } from './workset-derive.ts';
import { flush } from './workset-flush.ts';
import { loadChange, preload } from './workset-load.ts';
import { alias, changes, createWorksetState, resolve, row, unalias, type FeedsMoved } from './workset-state.ts';
import type { ServerBase, StoredChange, StoredSubscription } from '../../src/schema.ts';
import type { EpisodeRef } from '../../src/types.ts';

/** Edits gathered for one transaction. */
export interface Workset {
  /** Read the rows, aliases and queued changes these guids (and what they alias to) need. */
  preload(guids: readonly string[]): Promise<void>;
  /** Read a stored change by id (and its row); the same object `changes()` holds afterwards. */
  loadChange(id: number): Promise<StoredChange | undefined>;
  /** Follow aliases to the guid the row is keyed by now. */
  resolve(guid: string): string;
  /** The row at a key. */
  row(key: string): StoredSubscription | undefined;
  /** The queued changes of a row, oldest first. */
  changes(key: string): StoredChange[];
  /** Put a row's server base (creating the row when missing) and re-derive its view; returns its key. */
  setBase(key: string, base: ServerBase): string;
  /** Create a row for a local add (no server state yet). */
  createRow(key: string): void;
  /** Add or edit a queued change and re-derive its row; returns the row's key afterwards. */
  putChange(change: StoredChange): string;
  /** Remove a queued change and re-derive its row; returns the row's key afterwards. */
  deleteChange(change: StoredChange): string;
  /** Record that `from` was replaced by `to`. */
  alias(from: string, to: string): void;
  /** Make `guid` its own key again (it no longer leads elsewhere). */
  unalias(guid: string): void;
  /** Write everything; returns the guids whose view changed. */
  flush(): Promise<string[]>;
  /** Keys of the rows and aliases this unit of work wrote (after `flush`). */
  written(): string[];
  /** Episodes moved with their feed's URL (after `flush`): under the old URL and under the new. */
  moved(): EpisodeRef[];
}

/**
 * Start a unit of work; call inside a read-write transaction over the data tables (see `StoreCore.edit`). `absent` names keys
 * the caller knows are in neither the rows nor the aliases table, so they are not read (a first pull into
 * an empty store would otherwise spend half its time reading nothing: `bulkGet` is one request per key).
 */
export function createWorkset(db: SyncDatabase, absent: (key: string) => boolean = () => false, feedsMoved?: FeedsMoved, copying?: (change: StoredChange) => boolean): Workset {
  const st = createWorksetState(db, absent, feedsMoved, copying);
  return {
    preload: (guids) => preload(st, guids),
    loadChange: (id) => loadChange(st, id),
    resolve: (guid) => resolve(st, guid),
    row: (key) => row(st, key),
    changes: (key) => changes(st, key),
    setBase: (key, base) => setBase(st, key, base),
    createRow: (key) => createRow(st, key),
    putChange: (change) => putChange(st, change),
    deleteChange: (change) => deleteChange(st, change),
    alias: (from, to) => alias(st, from, to),
    unalias: (guid) => unalias(st, guid),
    flush: () => flush(st),
    written: () => st.writtenKeys,
    moved: () => st.movedEpisodes,
  };
}
