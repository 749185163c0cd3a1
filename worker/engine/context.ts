// The one object the engine's parts share. Each part (events, status, schedule, run, tabs, api) is a
// module of functions that take it explicitly; nothing reaches shared state through closures.
import type { SyncDatabase } from '../../src/schema.ts';
import type { Auth, Clock, ErrorInfo, Listener, PullProgress, SyncPhase, SyncReport, SyncStatus } from '../../src/types.ts';
import type { Channel } from '../channel.ts';
import type { Leadership } from '../leader.ts';
import type { ResolvedOptions } from '../options.ts';
import type { Binding, Store } from './store.ts';
import type { Transport } from '../transport.ts';

/** What the engine knows about itself and the world right now: what status reports (written by runs, the API and the other tabs). Absent is unset (a flag: false). */
export interface EngineState {
  auth: Auth | undefined;
  phase: SyncPhase;
  /** The page's `online`/`offline` signal. */
  browserOnline: boolean;
  /** False after a request got no answer; true again on any answer. */
  reachable: boolean;
  /** The page's visibility (true until told otherwise): a hidden page does not poll. */
  visible: boolean;
  /** Set by a 401/403 until `setAuth`. */
  authPaused?: boolean;
  closed?: boolean;
  lastError?: ErrorInfo;
  progress?: PullProgress;
  /** The leader tab's last status, for a follower to report. */
  leaderStatus?: SyncStatus;
  /** HTTP requests sent so far (reports count their own). */
  requests: number;
}

/** What runs hand each other about the queue and the server: what the next one must do first, what is on its way. */
export interface WorkState {
  /** A push asked for a pull to reconcile (a 2xx it could not read). */
  needsPull?: boolean;
  /** A change that may have reached the server failed: the next run pulls first (the server's later word may settle it, see `handOut`). */
  pullNext?: boolean;
  /** Whether this engine's runs took the queue over from earlier contexts (see `takeOver`): its first run does. */
  tookOver?: boolean;
  /** Consecutive failed pulls (the retry backoff's exponent). */
  pullFailures: number;
  /** The page went hidden (or there is none: the service worker): the next push sends every pending episode change, not only the due ones. */
  flushEpisodes?: boolean;
  /** Queue ids being sent right now: local edits do not coalesce into them. */
  inFlight: Set<number>;
}

/** A promise with its settle functions (a caller waiting for the next run). */
export interface Waiter<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

/** The schedule's bookkeeping: the single-flight run, the timers, and who waits for what. */
export interface RunState {
  running?: Promise<SyncReport>;
  runningKind?: 'sync' | 'push';
  /** Whether the running sync has started pushing: a caller arriving then gets a run of its own. */
  pushStarted?: boolean;
  nextSync?: Waiter<SyncReport>;
  /** Whether everyone waiting for `nextSync` is a timer (a background run binds no signed-out store). */
  nextBackground: boolean;
  pushAgain?: boolean;
  timers: Set<unknown>;
  pushTimerAt?: number;
  pullRetry?: unknown;
  /** When the last pull began, or when the next one asked for is set to begin (monotonic ms; see `pullSoon`). */
  pullAt?: number;
  /** The running run's view of the store (see `runStore`): what the transport keeps goes through it. */
  store?: Store;
  /** `sync()` calls forwarded to the leader tab, by request id. */
  forwarded: Map<string, Omit<Waiter<SyncReport>, 'promise'>>;
}

/** Everything the engine's parts share. */
export interface EngineContext {
  readonly opts: ResolvedOptions;
  readonly clock: Clock;
  /** Device time that does not step while the engine runs (`steadyNow` in clock.ts): what holds are measured in. */
  readonly steadyNow: () => number;
  readonly db: SyncDatabase;
  readonly store: Store;
  readonly transport: Transport;
  readonly binding: Binding;
  readonly leadership: Leadership;
  readonly channel: Channel;
  /** Aborted by `close()`: cancels requests in flight. */
  readonly closing: AbortController;
  readonly state: EngineState;
  readonly runs: RunState;
  readonly work: WorkState;
  /** What one run does (`execute` in run.ts), handed to the schedule, which decides when runs happen and imports no run. */
  readonly execute: (kind: 'sync' | 'push', fromTimer: boolean) => Promise<SyncReport>;
  readonly listeners: { change: Set<Listener<'change'>>; status: Set<Listener<'status'>> };
  /** Settles with the store's epoch once this engine claimed it; `clear()` unsets it so the next sync binds again. */
  bound?: Promise<string>;
  /** Whether a status event is already queued (they are coalesced). */
  statusQueued?: boolean;
  /** Where a page holds a last copy: builds it in the caller's transaction, and returns its telling (see `watchLastChance`). */
  copy?: (() => Promise<() => void>) | undefined;
  /** While a local edit announces itself: its own transaction told the copy with it already. */
  told?: boolean;
}
