/**
 * What an app's own service worker imports: `serveBackgroundSync` sends what waits with every page closed.
 * @packageDocumentation
 * @module opa-sync/sw
 */
// opa-sync/sw: what an app's own service worker imports. On the library's Background Sync tag it pushes what
// waits in each store a page asked background sync for, with the engine's own code under the tabs' Web Lock.
// Through the engine entry: the library build then shares its chunks with opa-sync/worker as they are, and
// splits nothing more out of the page entry's.
import { createSyncEngine, isSyncError, type Auth } from './index.ts';
import { openSyncDatabase } from '../src/schema.ts';
import { knownStores, type KnownStore } from './sw-registry.ts';

export type { KnownStore } from './sw-registry.ts';

/** The default Background Sync tag (the page client registers it). */
export const BACKGROUND_SYNC_TAG = 'opa-sync';

/** A `sync` event as the service worker gets it. */
export interface SyncEventLike {
  /** The registration's tag (`'opa-sync'` for the library's). */
  readonly tag: string;
  /** True on the browser's last attempt for this registration: then what still waits is left for the next open. */
  readonly lastChance?: boolean;
  /** Keeps the service worker alive until `promise` settles; a rejection asks the browser to try again later. */
  waitUntil(promise: Promise<unknown>): void;
}

/** Where the `sync` listener goes: the service worker's global scope (a stand-in in tests). */
export interface SyncEventTarget {
  /** Adds the `sync` listener. */
  addEventListener(type: 'sync', listener: (event: SyncEventLike) => void): void;
}

/** Options of `serveBackgroundSync`. */
export interface BackgroundSyncOptions {
  /**
   * The credentials for a store's server, read from wherever the app keeps them; `undefined`: nothing is sent for
   * that store (it waits for the next open). Without a provider only stores whose page sent no credentials (a
   * same-origin server that knows the user by cookie, an open server) are pushed.
   */
  auth?: (store: KnownStore) => Auth | undefined | Promise<Auth | undefined>;
  /** The tag to answer. @default 'opa-sync' */
  tag?: string;
  /** How long one event keeps retrying, ms (Chromium gives an event 3 minutes). @default 150000 */
  budget?: number;
  /** The first retry's delay, ms; each next one doubles (at most 4 s). @default 1000 */
  baseDelay?: number;
  /** The global scope to listen on. @default globalThis */
  target?: SyncEventTarget;
  /** Injectable for tests. */
  fetch?: typeof fetch;
}

/** What one sync event did for one store: `sent` (nothing waits), `waiting` (still queued), `skipped` (no credentials, or a store this worker cannot open). */
export type StoreOutcome = 'sent' | 'waiting' | 'skipped';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Whether the store is there at a schema this code knows. A newer one (a tab already runs newer code than this
 * service worker) is left alone: opening it would fail or, worse, read it with the wrong rules.
 */
async function openable(dbName: string): Promise<boolean> {
  const list = await indexedDB.databases?.().catch(() => undefined);
  if (!list) return true;
  const found = list.find((d) => d.name === dbName);
  // Dexie keeps its version × 10 as the IndexedDB version.
  return found !== undefined && (found.version ?? 0) <= openSyncDatabase(dbName).verno * 10;
}

/** Push one store until nothing waits, the budget ends, or retrying cannot help (paused on 401/403). */
async function pushStore(store: KnownStore, options: BackgroundSyncOptions, deadline: number): Promise<StoreOutcome> {
  const auth = options.auth ? await options.auth(store) : undefined;
  if ((store.authed && auth === undefined) || !(await openable(store.dbName))) return 'skipped';
  const { dbName, baseUrl, protocol, device, account } = store;
  const engine = createSyncEngine({
    dbName, baseUrl, protocol, device,
    ...(account !== undefined ? { account } : {}),
    ...(auth !== undefined ? { auth } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    pullInterval: 0,
  });
  try {
    let delay = options.baseDelay ?? 1000;
    for (;;) {
      // A read first (it claims nothing): a store with nothing waiting, a signed-out one included, is not synced.
      // A new tab may also have upgraded the schema meanwhile (our connection closed on versionchange).
      if (!(await openable(dbName))) return 'skipped';
      const before = await engine.status();
      if (before.pending + before.pendingEpisodes === 0) return 'sent';
      if (before.phase === 'auth-required') return 'waiting';
      try {
        // Under the tabs' lock: this worker runs it when it leads, else the leading tab does (one sender).
        await engine.sync();
      } catch (error) {
        // Another account's store, or one this code cannot use: leave it alone.
        if (!isSyncError(error) || error.code === 'account-mismatch' || error.code === 'storage') return 'skipped';
      }
      if (!(await openable(dbName))) return 'skipped';
      const status = await engine.status();
      if (status.pending + status.pendingEpisodes === 0) return 'sent';
      if (status.phase === 'auth-required') return 'waiting';
      if (performance.now() + delay > deadline) return 'waiting';
      await sleep(delay);
      // At most 4 s apart: a server back after minutes is seen within 5 s; 150 s of it is ~40 tries, bounded.
      delay = Math.min(delay * 2, 4_000);
    }
  } finally {
    await engine.close().catch(() => undefined);
  }
}

/** Push every known store once the event fires; rejects (so the browser tries again) when something still waits. */
async function onSync(options: BackgroundSyncOptions, lastChance: boolean): Promise<StoreOutcome[]> {
  // A duration: monotonic, so a device clock step does not end the retries early or stretch them.
  const deadline = performance.now() + (options.budget ?? 150_000);
  const stores = await knownStores();
  const outcomes = await Promise.all(stores.map((store) => pushStore(store, options, deadline).catch((): StoreOutcome => 'waiting')));
  // On the last attempt a rejection buys nothing: everything stays queued for the app's next open anyway.
  if (outcomes.includes('waiting') && !lastChance) throw new Error('opa-sync: changes still wait for the server; the browser will try again');
  return outcomes;
}

/** Answer the library's Background Sync tag in the app's service worker: push what waits with every page closed. */
export function serveBackgroundSync(options: BackgroundSyncOptions = {}): void {
  const tag = options.tag ?? BACKGROUND_SYNC_TAG;
  const target = options.target ?? (globalThis as unknown as SyncEventTarget);
  target.addEventListener('sync', (event) => {
    if (event.tag !== tag) return;
    event.waitUntil(onSync(options, event.lastChance === true));
  });
}
