// The sync engine: one object that owns the store, the schedule, leadership and events.
import { SyncError, isSyncError, isTransient } from '../src/errors.ts';
import { openSyncDatabase } from '../src/schema.ts';
import type {
  Auth,
  DeletionStatus,
  ErrorInfo,
  Listener,
  PullProgress,
  SubscriptionChange,
  SubscriptionFilter,
  SyncApi,
  SyncEvents,
  SyncOptions,
  SyncPhase,
  SyncReport,
  SyncStatus,
} from '../src/types.ts';
import { backoffDelay } from './backoff.ts';
import { errorInfo } from './error-info.ts';
import { openChannel, type ChannelMessage } from './channel.ts';
import { createHttp } from './http.ts';
import { acquireLeadership } from './leader.ts';
import { checkAuth, resolveOptions } from './options.ts';
import { push } from './outbox.ts';
import { pull } from './pull.ts';
import { createStore, isClosedError } from './store.ts';
import { isFeedUrl, parseDeletion } from './wire.ts';

/** The engine: the shared method set, events, and the page's connectivity and visibility signals. */
export interface SyncEngine extends SyncApi {
  /** Listen to an event; returns the unsubscribe. */
  on<E extends keyof SyncEvents>(event: E, listener: Listener<E>): () => void;
  /** The page's `online`/`offline` events (workers do not reliably get their own). */
  setOnline(online: boolean): void;
  /** The page's visibility; becoming visible triggers a pull. */
  setVisible(visible: boolean): void;
}

/** ms of server time re-fetched before the cursor (second-precision servers, commit-order gaps). */
const PULL_OVERLAP = 2000;
const MAX_DRAINS = 3;
/** ms over which status events are coalesced. */
const STATUS_THROTTLE = 25;

/** Create the sync engine; it runs wherever IndexedDB and fetch exist. */
export function createSyncEngine(options: SyncOptions): SyncEngine {
  const opts = resolveOptions(options);
  let auth: Auth | undefined = opts.auth;
  const db = openSyncDatabase(opts.dbName);
  const store = createStore(db);
  const binding = { server: opts.server, ...(opts.account !== undefined ? { account: opts.account } : {}) };
  let ready = store.bind(binding);
  ready.catch(() => undefined);
  const closing = new AbortController();
  const listeners = { change: new Set<Listener<'change'>>(), status: new Set<Listener<'status'>>() };
  const inFlight = new Set<number>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const waiting = new Map<string, { resolve(report: SyncReport): void; reject(error: unknown): void }>();

  let requests = 0;
  let phase: SyncPhase = 'idle';
  let browserOnline = (globalThis as { navigator?: { onLine?: boolean } }).navigator?.onLine ?? true;
  let reachable = true;
  let authPaused = false;
  let closed = false;
  let lastError: ErrorInfo | undefined;
  let progress: PullProgress | undefined;
  let leaderStatus: SyncStatus | undefined;
  let pullFailures = 0;
  let needsPull = false;

  const http = createHttp({
    baseUrl: opts.baseUrl,
    fetch: opts.fetch,
    timeout: opts.timeout,
    auth: () => auth,
    signal: closing.signal,
    onRequest: () => void requests++,
    onResponse: () => {
      if (!reachable) {
        reachable = true;
        emitStatus();
      }
    },
  });

  const channel = openChannel(opts.dbName, onMessage);
  const leadership = acquireLeadership(opts.dbName, () => {
    if (closed) return;
    emitStatus();
    startInterval();
    background('sync');
  });

  // ---- events ----------------------------------------------------------------------------------

  function emit<E extends keyof SyncEvents>(event: E, payload: SyncEvents[E]): void {
    for (const listener of listeners[event] as Set<Listener<E>>) {
      try {
        listener(payload);
      } catch (error) {
        // A listener's bug must not break sync; surface it where developers look.
        console.error('opa-sync: a listener threw', error);
      }
    }
  }

  function emitChange(guids: string[]): void {
    if (!guids.length) return;
    emit('change', { guids });
    channel.post({ type: 'change', guids });
    emitStatus();
  }

  let statusQueued = false;
  /** Coalesced: a pull of thousands of pages must not read the counts thousands of times. */
  function emitStatus(): void {
    if (statusQueued || closed) return;
    statusQueued = true;
    setTimeout(() => {
      statusQueued = false;
      if (closed) return;
      snapshot().then(
        (s) => {
          emit('status', s);
          if (leadership.isLeader) channel.post({ type: 'status', status: s });
        },
        () => undefined,
      );
    }, STATUS_THROTTLE);
  }

  function setPhase(next: SyncPhase): void {
    if (phase === next) return;
    phase = next;
    emitStatus();
  }

  function idlePhase(): SyncPhase {
    if (closed) return 'closed';
    if (authPaused) return 'auth-required';
    if (!browserOnline || !reachable) return 'offline';
    return 'idle';
  }

  async function snapshot(): Promise<SyncStatus> {
    let counts = { pending: 0, failed: 0 };
    let cursor: number | undefined;
    let lastSuccess: number | undefined;
    try {
      if (!closed) {
        await ready;
        [counts, cursor, lastSuccess] = await Promise.all([store.counts(), store.cursor(), store.lastSuccess()]);
      }
    } catch {
      // A closed or mismatched database: report what is known.
    }
    const leader = leadership.isLeader;
    const mine: SyncStatus = {
      phase: closed ? 'closed' : phase,
      online: browserOnline && reachable,
      leader,
      pending: counts.pending,
      failed: counts.failed,
    };
    if (cursor !== undefined) mine.cursor = new Date(cursor).toISOString();
    if (lastSuccess !== undefined) mine.lastSuccess = lastSuccess;
    if (lastError) mine.lastError = lastError;
    if (progress) mine.progress = progress;
    if (leader || !leaderStatus || closed) return mine;
    // A follower reports what the leader is doing, with its own view of the shared queue.
    const fromLeader: SyncStatus = { ...leaderStatus, leader: false, pending: counts.pending, failed: counts.failed };
    if (!browserOnline) fromLeader.online = false;
    return fromLeader;
  }

  function onMessage(message: ChannelMessage): void {
    if (closed) return;
    switch (message.type) {
      case 'change':
        emit('change', { guids: message.guids });
        emitStatus();
        break;
      case 'queued':
        if (leadership.isLeader) schedulePush();
        emitStatus();
        break;
      case 'status':
        leaderStatus = message.status;
        if (!leadership.isLeader) emitStatus();
        break;
      case 'sync-request':
        if (leadership.isLeader) {
          sync().then(
            (report) => channel.post({ type: 'sync-result', id: message.id, report }),
            (error) => channel.post({ type: 'sync-result', id: message.id, error: errorInfo(error) }),
          );
        }
        break;
      case 'sync-result': {
        const waiter = waiting.get(message.id);
        if (!waiter) break;
        waiting.delete(message.id);
        if (message.report) waiter.resolve(message.report);
        else {
          const e = message.error!;
          waiter.reject(new SyncError(e.code, e.message, e.status === undefined ? {} : { status: e.status }));
        }
        break;
      }
    }
  }

  // ---- scheduling ------------------------------------------------------------------------------

  let running: Promise<SyncReport> | undefined;
  let runningKind: 'sync' | 'push' | undefined;
  /** Whether the running sync has started pushing: a caller arriving then gets a run of its own. */
  let pushStarted = false;
  let nextSync: { promise: Promise<SyncReport>; resolve(r: SyncReport): void; reject(e: unknown): void } | undefined;
  let pushAgain = false;

  function later(ms: number, fn: () => void): ReturnType<typeof setTimeout> | undefined {
    if (closed) return undefined;
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, Math.max(0, ms));
    timers.add(timer);
    return timer;
  }

  /** The pull retry after a transient failure; a pull that succeeds meanwhile makes it pointless. */
  let pullRetry: ReturnType<typeof setTimeout> | undefined;
  function cancelPullRetry(): void {
    if (pullRetry === undefined) return;
    clearTimeout(pullRetry);
    timers.delete(pullRetry);
    pullRetry = undefined;
  }

  let pushTimerAt: number | undefined;
  function schedulePush(delay = opts.pushDelay): void {
    if (closed || !leadership.isLeader) return;
    const at = Date.now() + delay;
    if (pushTimerAt !== undefined && pushTimerAt <= at) return;
    pushTimerAt = at;
    later(delay, () => {
      if (pushTimerAt !== at) return;
      pushTimerAt = undefined;
      background('push');
    });
  }

  let interval: ReturnType<typeof setInterval> | undefined;
  function startInterval(): void {
    if (interval || opts.pullInterval <= 0 || closed) return;
    interval = setInterval(() => background('sync'), opts.pullInterval);
    (interval as { unref?: () => void }).unref?.();
  }

  function launch(kind: 'sync' | 'push'): Promise<SyncReport> {
    runningKind = kind;
    pushStarted = false;
    const run = execute(kind);
    running = run;
    run
      .catch(() => undefined)
      .then(() => {
        if (running !== run) return;
        running = undefined;
        runningKind = undefined;
        if (nextSync) {
          const waiter = nextSync;
          nextSync = undefined;
          pushAgain = false;
          launch('sync').then(waiter.resolve, waiter.reject);
        } else if (pushAgain) {
          pushAgain = false;
          background('push');
        }
      });
    return run;
  }

  /** A run the engine starts itself: errors are recorded in status, never thrown at anyone. */
  function background(kind: 'sync' | 'push'): void {
    if (closed || !leadership.isLeader || !browserOnline || authPaused) return;
    if (kind === 'push') {
      if (running) pushAgain = true;
      else launch('push').catch(() => undefined);
      return;
    }
    requestSync().catch(() => undefined);
  }

  function requestSync(): Promise<SyncReport> {
    // Join a run only while it is still pulling: a later caller's changes must be in the push it waits for.
    if (running && runningKind === 'sync' && !pushStarted) return running;
    if (running) {
      if (!nextSync) {
        let resolve!: (r: SyncReport) => void;
        let reject!: (e: unknown) => void;
        const promise = new Promise<SyncReport>((res, rej) => {
          resolve = res;
          reject = rej;
        });
        nextSync = { promise, resolve, reject };
      }
      return nextSync.promise;
    }
    return launch('sync');
  }

  async function execute(kind: 'sync' | 'push'): Promise<SyncReport> {
    await ready;
    // Cheap, and it re-records the binding if another context deleted the database under us.
    await store.bind(binding);
    const report: SyncReport = { pulled: 0, pushed: 0, failed: 0, pending: 0, requests: 0 };
    const before = requests;
    let pullError: unknown;
    let pushErrors = 0;
    try {
      if (kind === 'sync' || needsPull) {
        needsPull = false;
        setPhase('pulling');
        try {
          const result = await pull({
            http,
            store,
            pageSize: opts.pageSize,
            overlap: PULL_OVERLAP,
            maxDrains: MAX_DRAINS,
            onProgress: (p) => {
              progress = p;
              emitStatus();
            },
            onChange: emitChange,
          });
          report.pulled = result.applied;
          pullFailures = 0;
          cancelPullRetry();
        } catch (error) {
          pullError = handleRunError(error);
        } finally {
          progress = undefined;
        }
      }
      if (!authPaused && !closed && browserOnline) {
        pushStarted = true;
        setPhase('pushing');
        const result = await push({
          http,
          store,
          // A pull that just succeeded proves the server answers: changes waiting out a backoff go now.
          force: kind === 'sync' && pullError === undefined,
          backoff: { baseDelay: opts.baseDelay, maxDelay: opts.maxDelay },
          concurrency: opts.concurrency,
          inFlight,
          halted: () => closed || authPaused || !browserOnline,
          onUnauthorized: (error) => {
            pushErrors++;
            pause(error);
          },
          onNeedsPull: () => {
            needsPull = true;
          },
          onChange: emitChange,
          onError: (error) => {
            pushErrors++;
            lastError = errorInfo(error);
            noteUnreachable(error);
          },
        });
        report.pushed = result.pushed;
        report.failed = result.failed;
        if (result.wakeAt !== undefined) schedulePush(result.wakeAt - Date.now());
      }
    } catch (error) {
      pullError ??= handleRunError(error);
    } finally {
      report.requests = requests - before;
      if (!closed) setPhase(idlePhase());
    }
    if (needsPull) later(0, () => background('sync'));
    report.pending = (await store.counts().catch(() => ({ pending: 0 }))).pending;
    const cursor = await store.cursor().catch(() => undefined);
    if (cursor !== undefined) report.cursor = new Date(cursor).toISOString();
    if (pullError) throw pullError;
    // A run that talked to the server without trouble makes the last error history.
    if (pushErrors === 0 && report.requests > 0) lastError = undefined;
    if (kind === 'sync' && pushErrors === 0) await store.setLastSuccess(Date.now()).catch(() => undefined);
    emitStatus();
    return report;
  }

  /** A request that got no answer is the only sign of connectivity a worker can trust. */
  function noteUnreachable(error: SyncError): void {
    if (error.code === 'network' || error.code === 'timeout') reachable = false;
  }

  function pause(error: SyncError): void {
    authPaused = true;
    lastError = errorInfo(error);
    setPhase('auth-required');
  }

  /** Record a failed run; schedule a retry for transient trouble. Returns the error to throw. */
  function handleRunError(error: unknown): unknown {
    if (isClosedError(error) || closed) return new SyncError('closed', 'the engine or its database was closed', { cause: error });
    lastError = errorInfo(error);
    if (isSyncError(error)) {
      if (error.code === 'unauthorized') pause(error);
      else if (isTransient(error)) {
        noteUnreachable(error);
        pullFailures++;
        cancelPullRetry();
        pullRetry = later(backoffDelay({ baseDelay: opts.baseDelay, maxDelay: opts.maxDelay }, pullFailures - 1, error.retryAfter), () => {
          pullRetry = undefined;
          background('sync');
        });
      }
    }
    emitStatus();
    return error;
  }

  // ---- the API ---------------------------------------------------------------------------------

  function alive(): void {
    if (closed) throw new SyncError('closed', 'the engine is closed');
  }

  async function local<T>(edit: () => Promise<{ result: T; changed: string[] }>): Promise<T> {
    alive();
    await ready;
    const { result, changed } = await edit();
    emitChange(changed);
    if (leadership.isLeader) schedulePush();
    else channel.post({ type: 'queued' });
    return result;
  }

  function checkGuid(guid: unknown, what = 'guid'): string {
    if (typeof guid !== 'string' || guid.trim() === '') throw new SyncError('invalid', `${what} must be a non-empty string`);
    return guid;
  }

  function checkFeedUrl(url: unknown): string {
    if (typeof url !== 'string' || !isFeedUrl(url)) throw new SyncError('invalid', `not an http(s) feed URL: ${String(url)}`);
    return url;
  }

  async function sync(): Promise<SyncReport> {
    alive();
    await ready;
    if (!browserOnline) throw new SyncError('offline', 'the page reports no network; changes stay queued');
    if (authPaused) throw new SyncError('unauthorized', 'paused after the server refused the credentials: call setAuth()', { status: 401 });
    if (!leadership.isLeader) return forwardSync();
    return requestSync();
  }

  function forwardSync(): Promise<SyncReport> {
    const id = crypto.randomUUID();
    return new Promise<SyncReport>((resolve, reject) => {
      waiting.set(id, { resolve, reject });
      channel.post({ type: 'sync-request', id });
      later(opts.timeout * 4, () => {
        if (!waiting.delete(id)) return;
        reject(new SyncError('timeout', 'the tab that syncs did not answer'));
      });
    });
  }

  const engine: SyncEngine = {
    sync,

    async subscriptions(filter?: SubscriptionFilter) {
      alive();
      await ready;
      return store.list(filter);
    },

    async subscription(guid: string) {
      alive();
      await ready;
      return store.get(checkGuid(guid));
    },

    async add(feedUrl: string, addOptions?: { guid?: string }) {
      checkFeedUrl(feedUrl);
      const guid = addOptions?.guid === undefined ? undefined : checkGuid(addOptions.guid);
      return local(() => store.add(feedUrl, guid, Date.now(), inFlight));
    },

    async update(guid: string, change: SubscriptionChange) {
      checkGuid(guid);
      if (typeof change !== 'object' || change === null) throw new SyncError('invalid', 'change must be an object');
      const clean: SubscriptionChange = {};
      if (change.feedUrl !== undefined) clean.feedUrl = checkFeedUrl(change.feedUrl);
      if (change.guid !== undefined) clean.guid = checkGuid(change.guid, 'change.guid');
      if (change.isSubscribed !== undefined) {
        if (typeof change.isSubscribed !== 'boolean') throw new SyncError('invalid', 'change.isSubscribed must be a boolean');
        clean.isSubscribed = change.isSubscribed;
      }
      if (Object.keys(clean).length === 0) throw new SyncError('invalid', 'a change needs at least one of feedUrl, guid, isSubscribed');
      return local(() => store.update(guid, clean, Date.now(), inFlight));
    },

    async remove(guid: string) {
      checkGuid(guid);
      await local(() => store.remove(guid, Date.now(), inFlight));
    },

    async deletion(id: number) {
      alive();
      if (typeof id !== 'number' || !Number.isInteger(id) || id < 0) throw new SyncError('invalid', 'a deletion id is a whole number');
      const response = await http.request('GET', http.url(`deletions/${id}`));
      const status = parseDeletion(response.body);
      const result: DeletionStatus = { deletionId: status.deletion_id, status: status.status };
      if (status.message !== undefined) result.message = status.message;
      return result;
    },

    async pending() {
      alive();
      await ready;
      return store.pending();
    },

    async failed() {
      alive();
      await ready;
      return store.failed();
    },

    async retry(id: number) {
      await local(() => store.retry(id));
    },

    async discard(id: number) {
      await local(() => store.discard(id));
    },

    status: snapshot,

    async setAuth(next: Auth) {
      alive();
      auth = checkAuth(next);
      if (authPaused) {
        authPaused = false;
        lastError = undefined;
        setPhase(idlePhase());
        background('sync');
      }
    },

    async clear() {
      alive();
      await ready.catch(() => undefined);
      await running?.catch(() => undefined);
      const keys = await store.allKeys().catch(() => [] as string[]);
      await store.clear(binding);
      // A store that belonged to another server or account is ours now.
      ready = Promise.resolve();
      lastError = undefined;
      emitChange(keys);
    },

    async close() {
      if (closed) return;
      closed = true;
      phase = 'closed';
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      if (interval) clearInterval(interval);
      closing.abort();
      for (const waiter of waiting.values()) waiter.reject(new SyncError('closed', 'the engine is closed'));
      waiting.clear();
      nextSync?.reject(new SyncError('closed', 'the engine is closed'));
      nextSync = undefined;
      await running?.catch(() => undefined);
      leadership.release();
      channel.close();
      db.close();
      emit('status', await snapshot());
    },

    on(event, listener) {
      const set = listeners[event] as Set<typeof listener>;
      set.add(listener);
      return () => void set.delete(listener);
    },

    setOnline(online: boolean) {
      if (browserOnline === online) return;
      browserOnline = online;
      if (online) reachable = true;
      setPhase(running ? phase : idlePhase());
      if (online) background('sync');
    },

    setVisible(visible: boolean) {
      if (visible) background('sync');
    },
  };
  return engine;
}
