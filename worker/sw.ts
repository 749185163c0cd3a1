/**
 * What an app's own service worker imports: `serveBackgroundSync` sends what waits with every page closed.
 * @packageDocumentation
 * @module opa-sync/sw
 */
// opa-sync/sw: what an app's own service worker imports. On the library's Background Sync tag it pushes what
// waits in each store a page asked background sync for, with the engine's own code under the tabs' Web Lock.
// Through the engine entry: the library build then shares its chunks with opa-sync/worker as they are, and
// splits nothing more out of the page entry's.
import { createSyncEngine, type Auth } from './index.ts';
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
  /** How long one event keeps waiting for the server, ms (Chromium gives an event 3 minutes). @default 150000 */
  budget?: number;
  /** The engine's first retry delay, ms; each next one doubles, at most 2 s (a server's Retry-After is a floor). @default 1000 */
  baseDelay?: number;
  /**
   * Milliseconds of a server's silence before a request is given up and tried again: short, so a server back from
   * an outage is reached soon even when a request sent during it never gets an answer. @default 4000
   */
  timeout?: number;
  /** The global scope to listen on. @default globalThis */
  target?: SyncEventTarget;
  /** Injectable for tests. */
  fetch?: typeof fetch;
}

/**
 * What one sync event did for one store: `sent` (nothing waits), `waiting` (still queued: the browser tries again),
 * `auth-required` (the server refused the credentials: it waits for the next open, no retry asked), `skipped` (no
 * credentials, or a store this worker cannot open).
 */
export type StoreOutcome = 'sent' | 'waiting' | 'auth-required' | 'skipped';

/** Checks a store's state at least this often, ms (a status event wakes it sooner). */
const WATCH = 1000;
/** How long past its budget an event still waits for the engine to learn who leads, ms. */
const LEARN = 10_000;

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

/**
 * Watch one store until nothing waits, the budget ends, or only new credentials can help. The sending is the
 * engine's, on its own schedule (backoff, the server's Retry-After as a floor), once this worker holds the tabs'
 * lock: while a tab leads, the tab sends with its own and this worker only watches (it forces no run on it).
 */
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
    // At most 2 s apart, each silent request given up after 4 s: a server back after minutes is seen within a few
    // seconds, even one whose requests during the outage hang; 150 s of it is a bounded ~25 tries.
    timeout: options.timeout ?? 4_000,
    retry: { baseDelay: options.baseDelay ?? 1000, maxDelay: Math.max(options.baseDelay ?? 0, 2_000) },
  });
  let wake = () => {};
  const unlisten = engine.on('status', () => wake());
  try {
    for (;;) {
      // A new tab may have upgraded the schema meanwhile (our connection closed on versionchange).
      if (!(await openable(dbName))) return 'skipped';
      // A read (it claims nothing): a store with nothing waiting, a signed-out one included, is not synced.
      const status = await engine.status();
      if (status.pending + status.pendingEpisodes === 0) return 'sent';
      if (status.phase === 'auth-required') return 'auth-required';
      const left = deadline - performance.now();
      // Until the engine knows whether a tab leads, the event goes on (bounded).
      if (left <= 0 && (status.phase !== 'starting' || left < -LEARN)) return 'waiting';
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, Math.min(WATCH, Math.max(left, 50)));
      });
    }
  } finally {
    unlisten();
    await engine.close().catch(() => undefined);
  }
}

/** Push every known store once the event fires; rejects (so the browser tries again) when something still waits that a retry may send. */
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
export type { Auth, Protocol } from '../src/types.ts';
