import { Dexie, type EntityTable } from 'dexie';
import { rowCodec } from './row-codec.ts';
import type { StoredAlias, StoredChange, StoredEpisode, StoredMeta, StoredSubscription } from './stored.ts';

export type { ServerBase, StoredSubscription, OutboxState, Handout, StoredChange, PendingEpisode, StoredEpisode, StoredAlias, StoredMeta } from './stored.ts';

/** The Dexie database of one opa-sync store. */
export type SyncDatabase = Dexie & {
  /** The local view of each subscription with its server base, keyed by the guid the app sees. */
  subscriptions: EntityTable<StoredSubscription, 'guid'>;
  /** Local changes waiting for the server (and those it refused), oldest first. */
  outbox: EntityTable<StoredChange, 'id'>;
  /** Replaced guids and what replaced them. */
  aliases: EntityTable<StoredAlias, 'from'>;
  /** The engine's bookkeeping (cursor, binding, …). */
  meta: EntityTable<StoredMeta, 'key'>;
  /** Each episode's listening state. */
  episodes: EntityTable<StoredEpisode, 'id'>;
};

/** Open (lazily, on first use) the database with opa-sync's schema; the page may use it for `liveQuery`. */
export function openSyncDatabase(name: string): SyncDatabase {
  const db = new Dexie(name) as SyncDatabase;
  // Versions are incremental upgrades: add a new `db.version(n)` below, never edit an old one.
  db.version(1).stores({
    subscriptions: 'guid, feedUrl',
    outbox: '++id, guid, state',
    aliases: 'from, to',
    meta: 'key',
  });
  // No secondary index on subscriptions: every pulled entry paid for a `feedUrl` index entry, and add()'s
  // lookup by feed URL is rare enough to scan. The aliases' `to` index was never queried.
  db.version(2).stores({ subscriptions: 'guid', aliases: 'from' });
  // Listening state: found by feed (identity matching happens within one podcast) and by due time (the queue).
  db.version(3).stores({ episodes: 'id, podcast, due' });
  db.use(rowCodec);
  return db;
}
