// Which stores a service worker may push for: the options that name each store (never credentials), kept in a
// small database of their own so a sign-out's clear() and the store's schema leave them alone. Dexie closes its
// connection on `versionchange`, so a schema upgrade elsewhere is never blocked by it.
import { Dexie } from 'dexie';
import type { Protocol } from '../src/types.ts';

/** The page options a service worker needs to open a store and reach its server: never credentials. */
export interface KnownStore {
  /** The store's IndexedDB database name (the page's `dbName`, or its default). */
  dbName: string;
  /** The server's base URL, normalised. */
  baseUrl: string;
  /** The server's protocol. */
  protocol: Protocol;
  /** gPodder: this client's device id (`'opa-sync'` unless the page named one). */
  device: string;
  /** The account the page bound the store to, when it named one. */
  account?: string;
  /** Whether the page sent credentials (a gPodder session's cookie is the browser's: not these): then nothing is sent without the service worker's `auth` provider. */
  authed: boolean;
}

/** The registry, as it has been since its first version (IndexedDB version 1: Dexie's 0.1). */
function open(): Dexie {
  const db = new Dexie('opa-sync-background');
  db.version(0.1).stores({ stores: 'dbName' });
  return db;
}

/** Record (or update) a store the service worker may push for. */
export async function rememberStore(store: KnownStore): Promise<void> {
  const db = open();
  try {
    await db.table('stores').put(store);
  } finally {
    db.close();
  }
}

/** Every store a page asked background sync for. */
export async function knownStores(): Promise<KnownStore[]> {
  const db = open();
  try {
    return await db.table<KnownStore>('stores').toArray();
  } finally {
    db.close();
  }
}
