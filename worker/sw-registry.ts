// Which stores a service worker may push for: the options that name each store (never credentials), kept in a
// small database of their own so a sign-out's clear() and the store's schema leave them alone.
import type { Protocol } from '../src/types.ts';

/** The page options a service worker needs to open a store and reach its server: never credentials. */
export interface KnownStore {
  dbName: string;
  baseUrl: string;
  protocol: Protocol;
  device: string;
  account?: string;
  /** Whether the page sent credentials (a gPodder session's cookie is the browser's: not these): then nothing is sent without the service worker's `auth` provider. */
  authed: boolean;
}

const REGISTRY = 'opa-sync-background';
const STORES = 'stores';

function open(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(REGISTRY, 1);
    request.onupgradeneeded = () => void request.result.createObjectStore(STORES, { keyPath: 'dbName' });
    request.onsuccess = () => {
      // A schema upgrade elsewhere is never blocked by this connection.
      request.result.onversionchange = () => request.result.close();
      resolve(request.result);
    };
    request.onerror = () => reject(request.error);
  });
}

async function inStore<T>(mode: IDBTransactionMode, work: (store: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  const db = await open();
  try {
    return await new Promise<T>((resolve, reject) => {
      const tx = db.transaction(STORES, mode);
      const request = work(tx.objectStore(STORES));
      tx.oncomplete = () => resolve(request.result);
      tx.onerror = tx.onabort = () => reject(tx.error);
    });
  } finally {
    db.close();
  }
}

/** Record (or update) a store the service worker may push for. */
export async function rememberStore(store: KnownStore): Promise<void> {
  await inStore('readwrite', (s) => s.put(store));
}

/** Every store a page asked background sync for. */
export async function knownStores(): Promise<KnownStore[]> {
  return inStore('readonly', (s) => s.getAll() as IDBRequest<KnownStore[]>);
}
