import { proxy, wrap, type Remote } from 'comlink';
import type { BackgroundSync } from './background-sync.ts';
import { SyncError } from './errors.ts';
import { createLastChance } from './last-chance.ts';
import type { EventSink, LastChanceMessage, WorkerApi, WorkerStartOptions } from './protocol.ts';
import { listen } from './listen.ts';
import { notify } from './notify.ts';
import { installErrorTransfer } from './transfer.ts';
import { createStores } from './store.ts';
import type { AddManyReport, ClientOptions, ExportOpmlOptions, Listener, StoreOptions, SyncApi, SyncEvents, SyncStatus, SyncStore } from './types.ts';

/** The page side: the engine's methods, async over comlink, plus events. */
export interface SyncClient extends SyncApi {
  /** Listen to an event (`change` also reports other tabs' changes); returns the unsubscribe. */
  on<E extends keyof SyncEvents>(event: E, listener: Listener<E>): () => void;
  /** The worker the engine runs in now (a new one once the page is back from the back/forward cache). */
  readonly worker: Worker;
  /** A reactive store of the local state for a UI, with a podcast's episodes when asked; the same store for the same podcast, as long as the client lives. */
  store(opts?: StoreOptions): SyncStore;
  /**
   * Read an OPML file's text (with the page's DOMParser) and `addMany` the feeds it names. Not XML, not OPML, over
   * 8 MiB or over 10,000 outlines: `invalid`, nothing queued; entries without a usable feed URL are skipped.
   */
  importOpml(text: string): Promise<AddManyReport>;
  /** The subscribed feeds as an OPML 2.0 document (`importOpml` reads it back to the same set). */
  exportOpml(opts?: ExportOpmlOptions): Promise<string>;
}

/** Calls harmless to make again: asked again of the next worker when the one answering them ended. */
const READS = ['sync', 'subscriptions', 'subscription', 'deletion', 'pending', 'failed', 'episode', 'episodes'] as const;
/** Local changes: one in flight when its worker ended may or may not have been saved, so it is not made twice. */
const CHANGES = ['add', 'addMany', 'update', 'remove', 'retry', 'discard', 'setProgress', 'markPlayed', 'clear'] as const;
type Forwarded = (typeof READS)[number] | (typeof CHANGES)[number];
// Every method of the API is forwarded or has its own wrapper below; a new one must be placed.
type Unplaced = Exclude<keyof SyncApi, Forwarded | 'status' | 'setAuth' | 'close'>;
const placed: [Unplaced] extends [never] ? true : Unplaced = true;
void placed;

/** One worker, from its start until it is ended (for the back/forward cache, or by close()). */
interface Life {
  worker: Worker;
  remote: Remote<WorkerApi>;
  /** Resolves with this life itself once it is ended (no answer is that): an answer not in by then never comes. */
  ended: Promise<unknown>;
  over?: boolean;
  end(): void;
}

/** Start the sync engine in a Web Worker and talk to it through comlink. */
export function createSyncClient(options: ClientOptions): SyncClient {
  installErrorTransfer();
  if (typeof options?.baseUrl !== 'string') throw new SyncError('invalid', 'baseUrl is required');
  const { worker: given, onLastChance, ...rest } = options;
  // Only data crosses to the worker (a function such as `fetch` cannot be cloned). The credentials the page keeps
  // are the ones in here: `setAuth()` replaces them, and every worker starts with them.
  const startOptions = JSON.parse(JSON.stringify(rest)) as WorkerStartOptions;
  let life!: Life;
  // What calls wait for: the worker answering now once it started, or (while the page is in the back/forward
  // cache) the next one.
  let next!: Promise<Life>;
  let thaw!: (life: Life | Promise<Life>) => void;
  const wait = () => (next = new Promise((resolve) => (thaw = resolve)));
  const listeners = { change: new Set<Listener<'change'>>(), status: new Set<Listener<'status'>>() };
  let closed = false;

  // Credentials stay in page memory (as the app holds them) for the requests the page sends as it goes away.
  const lastChance = createLastChance({ baseUrl: options.baseUrl, auth: options.auth, onSend: onLastChance });
  // Loaded only when asked for: pages without it carry none of it.
  let background: BackgroundSync | undefined;
  if (options.backgroundSync) void import('./background-sync.ts').then((m) => void (background = m.createBackgroundSync()));
  const sink: EventSink = (event, payload) => {
    let value = payload as SyncEvents[keyof SyncEvents];
    if (event === 'status' && background) value = background.mark(background.onStatus(payload as SyncStatus));
    for (const listener of listeners[event as keyof SyncEvents] as Set<Listener<keyof SyncEvents>>) notify(listener, value);
  };
  // A worker that never loads (its file not served, a Content-Security-Policy that forbids it) only fires
  // `error`: without this every call would wait forever for an answer. `status()` and a status event say so.
  let unavailable: SyncStatus | undefined;

  // Signals go to the worker alive now, if any: one ended for the back/forward cache gets nothing (WebKit fires
  // visibilitychange after that pagehide), and the next one is told the page's state as it starts.
  const tell = <M extends 'setOnline' | 'setVisible'>(method: M, value: boolean) => void (life.over || life.remote[method](value).catch(() => undefined));
  const onVisibility = () => {
    if (document.visibilityState === 'hidden') background?.onHidden();
    tell('setVisible', document.visibilityState === 'visible');
  };

  function boot(): void {
    // Vite (ours at build time, and the app's) turns this into a bundled module worker next to this file.
    const worker = given ?? new Worker(new URL('../worker/entry.ts', import.meta.url), { type: 'module', name: 'opa-sync' });
    const remote = wrap<WorkerApi>(worker);
    worker.addEventListener?.('message', (event: Event) => {
      const copy = ((event as MessageEvent).data as Partial<LastChanceMessage> | undefined)?.['opa-last-chance'];
      // None after close(): a copy posted as it closed must not register a deferred send.
      if (copy && !closed) lastChance.update(copy);
    });
    let loaded = false;
    let end!: (value: unknown) => void;
    const ended = new Promise((resolve) => (end = resolve));
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
    const self: Life = (life = {
      worker,
      remote,
      ended,
      end() {
        self.over = true;
        end(self);
        worker.terminate();
      },
    });
    // Started, failed to load, or ended first (calls then wait for the next one).
    thaw(Promise.race([remote.start(startOptions, proxy(sink)).then(() => void (loaded = true)), loadFailed, ended]).then(() => self));
    // The engine exists once `start` is taken in: what comes after it finds it.
    if (globalThis.navigator?.onLine === false) tell('setOnline', false);
    // A page opened in the background does not poll until it is shown.
    if (globalThis.document?.visibilityState === 'hidden') onVisibility();
  }
  wait();
  boot();

  // Into the back/forward cache, the worker would be frozen with it, holding its database transactions and the
  // leader's lock (WebKit keeps them: another tab's reads wait until the entry is evicted). It goes instead; what
  // waits is in the outbox and in the page's last-chance copy, sent just before. Back, a new one starts, and
  // the app and the store re-read everything: other tabs' events did not reach a frozen page.
  const onPageHide = (event: Event) => {
    // A page being unloaded or frozen gets no visibilitychange in every browser: flush listening state then too.
    tell('setVisible', false);
    if ((event as PageTransitionEvent).persisted && !given) {
      life.end();
      wait();
    }
  };
  const onPageShow = () => {
    if (!life.over || closed) return;
    boot();
    sink('change', { guids: [], queue: true, everything: true });
  };
  const unlisten = listen([
    ['w', 'online', () => tell('setOnline', true)],
    ['w', 'offline', () => tell('setOnline', false)],
    ['w', 'pagehide', onPageHide],
    ['w', 'pageshow', onPageShow],
    // Back to the window: another device may have changed something meanwhile.
    ['w', 'focus', () => tell('setVisible', true)],
    ['d', 'visibilitychange', onVisibility],
  ]);

  /**
   * `name(...args)` answered by the worker once it started. A worker ended under a call (the page went into the
   * back/forward cache) asks a read again of the next one, and rejects a change, which it may or may not have saved.
   */
  async function call(name: keyof WorkerApi, args: unknown[]): Promise<unknown> {
    for (;;) {
      if (closed) throw new SyncError('closed', 'the client is closed');
      const now = await next;
      if (now.over) continue;
      const answer = await Promise.race([(now.remote[name] as (...a: unknown[]) => Promise<unknown>)(...args), now.ended]);
      if (answer !== now) return answer;
      if ((CHANGES as readonly string[]).includes(name))
        throw new SyncError('interrupted', `${name}() may or may not have been saved: the sync worker ended under it (the page went into the back/forward cache, or close()); read the state again and repeat the change if it is missing`);
    }
  }

  let stores: ((podcast?: string) => SyncStore) | undefined;
  // Fetched now, while the page is online: an import offline must not depend on a chunk never loaded.
  const opml = () => import('./opml-methods.ts');
  opml().catch(() => undefined);
  // The methods that go to the worker as they are, each once it has started.
  const forwarded = Object.fromEntries([...READS, ...CHANGES].map((name) => [name, (...args: unknown[]) => call(name, args)])) as Pick<SyncApi, Forwarded>;
  const client: SyncClient = {
    get worker() {
      return life.worker;
    },
    store: (opts) => (stores ??= createStores(client))(opts?.podcast),
    importOpml: (text) => opml().then((m) => m.importOpml(client, text)),
    exportOpml: (opts) => opml().then((m) => m.exportOpml(client, opts)),
    ...forwarded,
    status: () =>
      (call('status', []) as Promise<SyncStatus>)
        .then((status) => background?.mark(status) ?? status)
        .catch((error: unknown) => (!closed && unavailable) || Promise.reject(error)),
    setAuth: (auth) =>
      call('setAuth', [auth]).then(() => {
        startOptions.auth = auth;
        lastChance.setAuth(auth);
      }),
    async close() {
      if (closed) return;
      closed = true;
      unlisten();
      lastChance.close();
      const now = life;
      // The worker may have failed to load or be gone already; ending it below is what matters.
      if (!now.over) await next.then(() => Promise.race([now.remote.close(), now.ended])).catch(() => undefined);
      now.end();
      // Calls waiting for a next worker settle: there is none.
      thaw(now);
      for (const set of Object.values(listeners)) set.clear();
    },
    on(event, listener) {
      const set = listeners[event] as Set<typeof listener>;
      set.add(listener);
      return () => void set.delete(listener);
    },
  };
  return client;
}
