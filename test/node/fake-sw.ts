// A stand-in for a service worker's global scope in Node: it fires `sync` events and, while one runs, the global
// has `clients` as a service worker's has (what the engine reads to know it runs there: it pushes first).
import { openSyncDatabase } from '../../src/schema.ts';
import type { SyncEventLike } from '../../worker/sw.ts';

/** Events running now: `clients` stays while one does. */
let running = 0;

/** The scope to pass as `serveBackgroundSync`'s `target`, and `fire` to send it a `sync` event. */
export function fakeSelf() {
  let listener: ((event: SyncEventLike) => void) | undefined;
  return {
    target: { addEventListener: (_: 'sync', l: (event: SyncEventLike) => void) => void (listener = l) },
    /** Fire a `sync` event; resolves or rejects as the promise given to `waitUntil` does. */
    fire(tag = 'opa-sync', lastChance = false): Promise<unknown> {
      const global = globalThis as { clients?: unknown };
      global.clients = {};
      running++;
      const done = () => void (--running || delete global.clients);
      let waited: Promise<unknown> = Promise.resolve('no waitUntil');
      try {
        listener!({ tag, lastChance, waitUntil: (p) => void (waited = p) });
      } catch (error) {
        done();
        throw error;
      }
      return waited.finally(done);
    },
  };
}

/** Forget every store pages registered for the service worker (the registry is per origin: each test starts with none). */
export function forgetStores(): Promise<unknown> {
  return new Promise((resolve) => {
    const r = indexedDB.deleteDatabase('opa-sync-background');
    r.onsuccess = r.onerror = resolve;
  });
}

/** How many changes the store's queue holds. */
export async function queuedIn(dbName: string): Promise<number> {
  const db = openSyncDatabase(dbName);
  try {
    return await db.outbox.count();
  } finally {
    db.close();
  }
}
