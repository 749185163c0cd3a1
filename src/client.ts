import { proxy, releaseProxy, wrap, type Remote } from 'comlink';
import type { BackgroundSync } from './background-sync.ts';
import { SyncError } from './errors.ts';
import { createLastChance } from './last-chance.ts';
import type { EventSink, LastChanceRequest, WorkerApi, WorkerStartOptions } from './protocol.ts';
import { listen } from './listen.ts';
import { notify } from './notify.ts';
import { installErrorTransfer } from './transfer.ts';
import { createStores } from './store.ts';
import type { ClientOptions, Listener, StoreOptions, SyncApi, SyncEvents, SyncStatus, SyncStore } from './types.ts';

/** The page side: the engine's methods, async over comlink, plus events. */
export interface SyncClient extends SyncApi {
  /** Listen to an event (`change` also reports other tabs' changes); returns the unsubscribe. */
  on<E extends keyof SyncEvents>(event: E, listener: Listener<E>): () => void;
  /** The worker the engine runs in now (a new one once the page is back from the back/forward cache). */
  readonly worker: Worker;
  /** A reactive store of the local state for a UI, with a podcast's episodes when asked; the same store for the same podcast, as long as the client lives. */
  store(opts?: StoreOptions): SyncStore;
}

function spawnWorker(): Worker {
  // Vite (ours at build time, and the app's) turns this into a bundled module worker next to this file.
  return new Worker(new URL('../worker/entry.ts', import.meta.url), { type: 'module', name: 'opa-sync' });
}

/** The methods the client passes through unchanged (spelled once: the page entry's size is budgeted). */
const FORWARDED = ['sync', 'subscriptions', 'subscription', 'add', 'update', 'remove', 'deletion', 'pending', 'failed', 'retry', 'discard', 'setProgress', 'markPlayed', 'episode', 'episodes', 'clear'] as const;
type Forwarded = (typeof FORWARDED)[number];
// Every method of the API is forwarded or has its own wrapper below; a new one must be placed.
type Unplaced = Exclude<keyof SyncApi, Forwarded | 'status' | 'setAuth' | 'close'>;
const placed: [Unplaced] extends [never] ? true : Unplaced = true;
void placed;

/** Start the sync engine in a Web Worker and talk to it through comlink. */
export function createSyncClient(options: ClientOptions): SyncClient {
  installErrorTransfer();
  if (!options || typeof options.baseUrl !== 'string') throw new SyncError('invalid', 'baseUrl is required');
  const { worker: given, onLastChance, ...rest } = options;
  // Only data crosses to the worker (a function such as `fetch` cannot be cloned).
  const startOptions = JSON.parse(JSON.stringify(rest)) as WorkerStartOptions;
  let worker: Worker;
  let remote: Remote<WorkerApi>;
  let started: Promise<void>;
  const listeners = { change: new Set<Listener<'change'>>(), status: new Set<Listener<'status'>>() };
  let closed = false;

  // Credentials stay in page memory (as the app holds them) for the requests the page sends as it goes away.
  const lastChance = createLastChance({ baseUrl: options.baseUrl, auth: options.auth, onSend: onLastChance });
  // Loaded only when asked for: pages without it carry none of it.
  let background: BackgroundSync | undefined;
  if (options.backgroundSync) void import('./background-sync.ts').then((m) => void (background = m.createBackgroundSync()));
  const sink: EventSink = (event, payload) => {
    if (event === 'last-chance') return lastChance.update(payload as LastChanceRequest[]);
    let value = payload as SyncEvents[keyof SyncEvents];
    if (event === 'status' && background) value = background.mark(background.onStatus(payload as SyncStatus));
    for (const listener of listeners[event as keyof SyncEvents] as Set<Listener<keyof SyncEvents>>) notify(listener, value);
  };
  // A worker that never loads (its file not served, a Content-Security-Policy that forbids it) only fires
  // `error`: without this every call would wait forever for an answer. `status()` and a status event say so.
  let unavailable: SyncStatus | undefined;

  /** The page is in the back/forward cache and its worker ended (see onPageHide). */
  let frozen = false;
  // Nothing reaches a worker ended for the back/forward cache (WebKit fires visibilitychange after that pagehide):
  // its proxy is released, and a call on it would throw.
  const tell = (fn: (worker: Remote<WorkerApi>) => Promise<unknown>) => void (frozen || fn(remote).catch(() => undefined));
  const onOnline = () => tell((w) => w.setOnline(true));
  const onOffline = () => tell((w) => w.setOnline(false));
  const onVisibility = () => {
    if (document.visibilityState === 'hidden') background?.onHidden();
    tell((w) => w.setVisible(document.visibilityState === 'visible'));
  };
  // Back to the window: another device may have changed something meanwhile.
  const onFocus = () => tell((w) => w.setVisible(true));

  function boot(): void {
    worker = given ?? spawnWorker();
    remote = wrap<WorkerApi>(worker);
    let loaded = false;
    const loadFailed = new Promise<never>((_, reject) => {
      worker.addEventListener?.('error', (event: Event) => {
        // An error a started worker throws later is not a failure to load.
        if (loaded) return;
        const { message } = event as Partial<ErrorEvent>;
        const error = new SyncError('unsupported', `the sync worker failed to load${message ? `: ${message}` : ''} (is its file served, and allowed by the page's CSP?)`);
        unavailable = {
          phase: 'unavailable',
          online: false,
          network: globalThis.navigator?.onLine === false ? 'offline' : 'unreachable',
          leader: false,
          pending: 0,
          failed: 0,
          pendingEpisodes: 0,
          lastError: { code: error.code, message: error.message },
        };
        reject(error);
        sink('status', unavailable);
      }, { once: true });
    });
    started = Promise.race([remote.start(startOptions, proxy(sink)).then(() => void (loaded = true)), loadFailed]);
    started.then(() => {
      if (globalThis.navigator?.onLine === false) onOffline();
      // A page opened in the background does not poll until it is shown.
      if (globalThis.document?.visibilityState === 'hidden') onVisibility();
    }, () => undefined);
  }
  boot();

  // Into the back/forward cache, the worker would be frozen with it, holding its database transactions and the
  // leader's lock (WebKit keeps them: another tab's reads wait until the entry is evicted). It goes instead; what
  // waits is in the outbox and in the page's last-chance copy, sent just before. Back, a new one starts, and
  // the app and the store re-read everything: other tabs' events did not reach a frozen page.
  const onPageHide = (event: Event) => {
    // A page being unloaded or frozen gets no visibilitychange in every browser: flush listening state then too.
    tell((w) => w.setVisible(false));
    if ((event as PageTransitionEvent).persisted && !given) {
      frozen = true;
      remote[releaseProxy]();
      worker.terminate();
    }
  };
  const onPageShow = () => {
    if (!frozen || closed) return;
    frozen = false;
    boot();
    sink('change', { guids: [], queue: true, everything: true });
  };
  const unlisten = listen([
    ['w', 'online', onOnline],
    ['w', 'offline', onOffline],
    ['w', 'pagehide', onPageHide],
    ['w', 'pageshow', onPageShow],
    ['w', 'focus', onFocus],
    ['d', 'visibilitychange', onVisibility],
  ]);

  async function call<T>(fn: () => Promise<T>): Promise<T> {
    if (closed) throw new SyncError('closed', 'the client is closed');
    await started;
    return fn();
  }

  let stores: ((podcast?: string) => SyncStore) | undefined;
  // The methods that go to the worker as they are, each once it has started.
  const forwarded = Object.fromEntries(
    FORWARDED.map((name) => [name, (...args: unknown[]) => call(() => (remote[name] as (...a: unknown[]) => Promise<unknown>)(...args))]),
  ) as Pick<SyncApi, Forwarded>;
  const client: SyncClient = {
    get worker() {
      return worker;
    },
    store: (opts) => (stores ??= createStores(client))(opts?.podcast),
    ...forwarded,
    status: () =>
      call(() => remote.status())
        .then((status) => background?.mark(status) ?? status)
        .catch((error: unknown) => (!closed && unavailable) || Promise.reject(error)),
    setAuth: (auth) =>
      call(async () => {
        await remote.setAuth(auth);
        lastChance.setAuth(auth);
      }),
    async close() {
      if (closed) return;
      closed = true;
      unlisten();
      lastChance.close();
      try {
        await started;
        await remote.close();
      } catch {
        // The worker may already be gone; terminating it below is what matters.
      }
      // Ended already for the back/forward cache: its proxy released once is not released again (comlink throws).
      if (!frozen) remote[releaseProxy]();
      worker.terminate();
      listeners.change.clear();
      listeners.status.clear();
    },
    on(event, listener) {
      const set = listeners[event] as Set<typeof listener>;
      set.add(listener);
      return () => void set.delete(listener);
    },
  };
  return client;
}
