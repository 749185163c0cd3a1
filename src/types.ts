import type { SyncErrorCode } from './errors.ts';

/**
 * Credentials for the server; kept in worker memory only, never written to IndexedDB. `session` (gPodder, a server
 * on the app's own origin): the engine logs in once with them (`POST /api/2/auth/{username}/login.json`), then
 * every request, the service worker's and the page's last copy go with the session cookie the server set, never
 * the password.
 */
export type Auth =
  | {
      /** Sent as `Authorization: Bearer {token}`. */
      type: 'bearer';
      /** The bearer token. */
      token: string;
    }
  | {
      /** Sent as `Authorization: Basic …` (UTF-8) on every request. */
      type: 'basic';
      /** The account's user name (gPodder, Nextcloud: also the account the store is bound to). */
      username: string;
      /** The account's password. */
      password: string;
    }
  | {
      /** A gPodder login once, then the session cookie the server set. */
      type: 'session';
      /** The account's user name (also the account the store is bound to). */
      username: string;
      /** The account's password: sent only with the login. */
      password: string;
    }
  | {
      /** One header of the app's choosing on every request. */
      type: 'header';
      /** The header's name (e.g. `X-Api-Key`). */
      name: string;
      /** The header's value. */
      value: string;
    };

/** The sync protocols the engine speaks. */
export type Protocol = 'opa' | 'gpodder' | 'nextcloud';

/** Options shared by the in-process engine and the page client. */
export interface SyncOptions {
  /** The server's base URL; endpoint paths (`/subscriptions`, `/deletions/{id}`; gPodder: `/api/2/…`) are appended. */
  baseUrl: string;
  /** The server's protocol: the Open Podcast API, gPodder v2 (`{baseUrl}/api/2/…`), or Nextcloud gPodder Sync (`{baseUrl}/index.php/apps/gpoddersync/…`). @default 'opa' */
  protocol?: Protocol;
  /** gPodder only: this client's device id (`[\w.-]+`), registered before the first pull. @default 'opa-sync' */
  device?: string;
  /** Credentials; replace them later with `setAuth`. */
  auth?: Auth;
  /**
   * Send what waits after every page is closed (Chromium's Background Sync, through the app's service worker
   * importing `opa-sync/sw`): the page registers the sync tag, the engine keeps this store's options (never
   * credentials) for the service worker. Elsewhere it does nothing (`status.backgroundSync: 'unsupported'`).
   */
  backgroundSync?: boolean;
  /** IndexedDB database name. @default `opa-sync:` + the normalised baseUrl */
  dbName?: string;
  /** Account the store is bound to (with the server); another account on the same store raises `account-mismatch`. */
  account?: string;
  /** `per_page` asked of the server. @default 500 */
  pageSize?: number;
  /** Milliseconds between background pulls while the page is visible (a hidden page does not poll); 0 pulls only on start, on `online`, `focus`, visibility and `sync()`. @default 60000 */
  pullInterval?: number;
  /** Milliseconds between two uploads of one episode's progress (`setProgress`); `markPlayed` is not throttled. @default 30000 */
  progressInterval?: number;
  /** Milliseconds a local change waits before it is pushed, so bursts coalesce. @default 50 */
  pushDelay?: number;
  /** Milliseconds of silence (no headers yet, or a pause in the body) before one HTTP request is abandoned; a request lasts at most ten of these in all. @default 30000 */
  timeout?: number;
  /** Replay and backoff tuning. */
  retry?: RetryOptions;
  /** The fetch to use (tests, custom transports). Engine only: a function cannot cross to the worker. @default globalThis.fetch */
  fetch?: typeof fetch;
  /** Where the engine reads the time, sets its timers and draws randomness (simulations, tests). Engine only. @default the system clock */
  clock?: Clock;
}

/** The engine's source of time and chance: inject one to run the engine in simulated time. */
export interface Clock {
  /** Milliseconds since the epoch (device time: scheduling only, never a sync cursor). */
  now(): number;
  /**
   * Milliseconds from an arbitrary origin that never go back (device clocks step): what elapsed time is
   * measured with. Without it, elapsed time falls back to `now()`.
   */
  monotonic?(): number;
  /** Call `callback` after `ms` milliseconds; returns a handle for `clearTimeout`. */
  setTimeout(callback: () => void, ms: number): unknown;
  /** Cancel a timer set by `setTimeout`. */
  clearTimeout(handle: unknown): void;
  /** A number in [0, 1): backoff jitter and local placeholder guids. */
  random(): number;
}

/** Backoff tuning for retried requests and deletion polling. */
export interface RetryOptions {
  /** First retry delay in ms. @default 1000 */
  baseDelay?: number;
  /** Longest retry delay in ms. @default 300000 */
  maxDelay?: number;
  /** How many subscriptions are pushed in parallel. @default 8 */
  concurrency?: number;
}

/** A last-chance send: the requests the page sent with `keepalive` as it went away, and why. */
export interface LastChanceSent {
  /** How many requests went. */
  requests: number;
  /** Body bytes in all (at most 64 KiB). */
  bytes: number;
  /** The page event that sent them: `pagehide` (closed, reloaded, navigated away) or `freeze` (the browser froze the hidden tab). */
  reason: 'pagehide' | 'freeze';
}

/** Options for `createSyncClient`: the engine's options plus the worker to use. */
export interface ClientOptions extends Omit<SyncOptions, 'fetch' | 'clock'> {
  /** A module worker that calls `exposeSyncEngine()` from `opa-sync/worker`; by default the package's own. */
  worker?: Worker;
  /** Told of each last-chance send as the page goes away (for a log that outlives the page: write it synchronously). */
  onLastChance?: (sent: LastChanceSent) => void;
}

/** One subscription as the app sees it: server state with pending local changes applied. */
export interface Subscription {
  /** Its id: the podcast GUID on the Open Podcast API, the feed URL on gPodder and Nextcloud; it can change (`change` events carry the new one). */
  guid: string;
  /** The podcast's feed URL. */
  feedUrl: string;
  /** Whether the user is subscribed; an unsubscribed entry stays listed (`subscriptions({ subscribed: true })` leaves it out). */
  isSubscribed: boolean;
  /** Server time the flag or feed address last changed. */
  subscriptionChanged?: string;
  /** Server time the guid last changed. */
  guidChanged?: string;
  /** Server time of the deletion, or the local time a deletion was requested (while pending). */
  deleted?: string;
  /** True while local changes to this subscription wait for the server. */
  pending: boolean;
}

/** A change to one subscription; at least one field. */
export interface SubscriptionChange {
  /** The new feed URL (the podcast moved). */
  feedUrl?: string;
  /** The new guid. */
  guid?: string;
  /** Subscribe (`true`) or unsubscribe (`false`). */
  isSubscribed?: boolean;
}

/** Filter for `subscriptions()`. */
export interface SubscriptionFilter {
  /** Only the subscribed (`true`) or only the unsubscribed (`false`) entries; both when absent. */
  subscribed?: boolean;
  /** Only the subscriptions with these guids, as the app sees them now (what `change` events carry; an older guid is not followed). */
  guids?: string[];
  /** Include tombstones of deleted subscriptions. @default false */
  includeDeleted?: boolean;
}

/** What a queued change does. */
export type ChangeKind = 'add' | 'update' | 'remove';

/** The reason a request or a change failed, as plain data. */
export interface ErrorInfo {
  /** What went wrong (the `SyncError` code): docs/errors.md says what to do about each. */
  code: SyncErrorCode;
  /** What happened, in words for a log or a tooltip. */
  message: string;
  /** The HTTP status, when an answer gave one. */
  status?: number;
}

/** A local change waiting for the server. */
export interface PendingChange {
  /** The change's id: what `retry(id)` and `discard(id)` take. */
  id: number;
  /** What it does: subscribe, edit, or delete. */
  kind: ChangeKind;
  /** The subscription's guid as the app sees it now. */
  guid: string;
  /** The feed it is about, for a label: for `add` the feed to subscribe to; for `update` and `remove` the subscription's (server) feed URL when the store knows it. */
  feedUrl?: string;
  /** For `update`: the change. */
  change?: SubscriptionChange;
  /** For `remove` once the server accepted it: the deletion job being polled. */
  deletionId?: number;
  /** Device time the change was made (ms since epoch). */
  createdAt: number;
  /** Tries that failed with a transient error so far (each waits longer before the next); 0 again after `retry()`. */
  attempts: number;
  /** The last transient error, while it is being retried. */
  lastError?: ErrorInfo;
}

/** A change the server refused for good; `retry(id)` re-queues it, `discard(id)` drops it. */
export interface FailedChange extends PendingChange {
  /** Why the server refused it. */
  reason: ErrorInfo;
}

/** Server-side status of a deletion job. */
export interface DeletionStatus {
  /** The server's id of the deletion job. */
  deletionId: number;
  /** Still running, done, or failed (the server rolled the deletion back). */
  status: 'PENDING' | 'SUCCESS' | 'FAILURE';
  /** The server's word on it, when it gave one. */
  message?: string;
}

/**
 * What the engine is doing. `starting`: it has not said yet whether this tab syncs (the store's first snapshot,
 * and an engine waiting to learn who leads); `unavailable`: the worker never loaded (`lastError.code` is
 * `unsupported`) and no call can succeed; `offline`: the device has no network (the page's `navigator.onLine`);
 * `unreachable`: it has, but the server did not answer the last request (down, or a proxy's 502/503/504): the
 * engine retries on its own, changes stay queued.
 */
export type SyncPhase = 'starting' | 'idle' | 'pulling' | 'pushing' | 'offline' | 'unreachable' | 'auth-required' | 'unavailable' | 'closed';

/** Progress of the running pull. */
export interface PullProgress {
  /** Pages (gPodder: requests) fetched so far. */
  pages: number;
  /** Distinct subscriptions read so far. */
  entries: number;
  /** The server's `total` when it gave one. */
  total?: number;
}

/** Whether the server can be reached: `offline` when the device has no network (the page's `navigator.onLine`), `unreachable` when it has but the last request got no answer. */
export type NetworkState = 'online' | 'offline' | 'unreachable';

/** Which episode: its feed URL, its enclosure (media) URL, and its RSS guid when the feed has one. */
export interface EpisodeRef {
  /** The podcast's feed URL. */
  podcast: string;
  /** The episode's enclosure (media) URL. */
  episode: string;
  /** The episode's RSS `<guid>`, when the feed has one: it keeps the episode's identity when its media URL changes. */
  guid?: string;
}

/** Where a listener stopped in one episode, as this device knows it. */
export interface EpisodeState extends EpisodeRef {
  /** Seconds into the episode. */
  position?: number;
  /** The episode's length in seconds, when known. */
  total?: number;
  /** Whether the episode is played: marked so, or its position reached its length. */
  played: boolean;
  /** ISO time of the change (on the device that made it) that set the newest field. */
  changedAt: string;
  /** A local change waits for the server. */
  pending: boolean;
  /** The server refused this episode's last change for good. */
  error?: ErrorInfo;
}

/** A play position to record. */
export interface ProgressChange {
  /** Seconds into the episode. */
  position: number;
  /** The episode's length in seconds, when known. */
  total?: number;
}

/** Which episodes `episodes()` lists. */
export interface EpisodeFilter {
  /** Only this feed's episodes. */
  podcast?: string;
  /** Only episodes whose state changed after this ISO time. */
  changedSince?: string;
}

/** A snapshot of the engine's state. */
export interface SyncStatus {
  /** What the engine is doing now. */
  phase: SyncPhase;
  /** `network === 'online'`: the device is online and the server answered the last request. */
  online: boolean;
  /** Tells the device being offline apart from the server being unreachable. */
  network: NetworkState;
  /** Whether this context holds the sync lock (talks to the server). */
  leader: boolean;
  /** Subscription changes waiting for the server (`pending()`). */
  pending: number;
  /** Subscription changes the server refused for good (`failed()`). */
  failed: number;
  /** Episodes with a local change waiting for the server. */
  pendingEpisodes: number;
  /** Server timestamp of the last completed pull. */
  cursor?: string;
  /** Device time of the last successful sync (ms since epoch). */
  lastSuccess?: number;
  /** The last error of a pull or push; cleared by a run that met none, by `setAuth` and by `clear`. */
  lastError?: ErrorInfo;
  /** While a pull runs: how far it got. */
  progress?: PullProgress;
  /** Page client with `backgroundSync: true` only: whether the Background Sync tag could be registered. */
  backgroundSync?: BackgroundSyncState;
}

/** `unsupported`: no Background Sync here; `ready`: nothing registered yet; `registered`; `failed`: registering was refused. */
export type BackgroundSyncState = 'unsupported' | 'ready' | 'registered' | 'failed';

/** The outcome of one `sync()` run. */
export interface SyncReport {
  /** Subscriptions whose local view the pull changed. */
  pulled: number;
  /** Queued changes the server acknowledged. */
  pushed: number;
  /** Episode changes (listening state) the server acknowledged (gPodder, Nextcloud). */
  episodesPushed?: number;
  /** Episodes whose listening state the pull changed (gPodder, Nextcloud). */
  episodesPulled?: number;
  /** Pulled episode actions skipped because they did not validate (bad numbers, stamp or URL; gPodder, Nextcloud). */
  episodesSkipped?: number;
  /** Changes moved to `failed()` in this run. */
  failed: number;
  /** Changes still queued after the run. */
  pending: number;
  /** Server timestamp of the last completed pull, after the run (as in `SyncStatus`). */
  cursor?: string;
  /** HTTP requests made. */
  requests: number;
}

/** Payload of the `change` event. */
export interface ChangeEvent {
  /** Guids (as the app sees them now) whose local view changed. */
  guids: string[];
  /** Set when the queue (`pending()`, `failed()`: entries, attempts, errors) may have changed. */
  queue?: true;
  /** Episodes whose listening state changed (absent when none did). */
  episodes?: EpisodeRef[];
  /** Anything may have changed (the page is back from the back/forward cache, where no event reached it): read again what you show. */
  everything?: true;
}

/** Events and their payloads. */
export interface SyncEvents {
  /** The local view changed: subscriptions, the queue or listening state. */
  change: ChangeEvent;
  /** The engine's state changed: a new `status()` snapshot. */
  status: SyncStatus;
}

/** Listener for one event. */
export type Listener<E extends keyof SyncEvents> = (payload: SyncEvents[E]) => void;

/** The method set shared by `SyncEngine` (in-process) and `SyncClient` (over comlink). */
export interface SyncApi {
  /** Pull, then push, now; concurrent calls share one run. */
  sync(): Promise<SyncReport>;
  /** The local view. */
  subscriptions(filter?: SubscriptionFilter): Promise<Subscription[]>;
  /** One subscription; an old guid resolves to the newest entry. */
  subscription(guid: string): Promise<Subscription | undefined>;
  /** Subscribe to a feed (POST); visible locally at once. */
  add(feedUrl: string, opts?: { guid?: string }): Promise<Subscription>;
  /**
   * Subscribe to every feed in the list not subscribed already, in one transaction with one `change` event (each
   * queued as `add()` queues it). At most 10,000 URLs (`invalid` otherwise, nothing queued); URLs that are not
   * http(s), or repeat one before, are skipped with a reason.
   */
  addMany(feedUrls: readonly string[]): Promise<AddManyReport>;
  /** Queue a change; resolves once it is durable, with the new local view. */
  update(guid: string, change: SubscriptionChange): Promise<Subscription>;
  /** Request deletion; the deletion job is polled until it settles. */
  remove(guid: string): Promise<void>;
  /** Ask the server for a deletion job's status. */
  deletion(id: number): Promise<DeletionStatus>;
  /** Queued changes not yet acknowledged. */
  pending(): Promise<PendingChange[]>;
  /** Changes the server refused for good. */
  failed(): Promise<FailedChange[]>;
  /** Re-queue a failed change. */
  retry(id: number): Promise<void>;
  /** Drop a failed change and restore the server's view. */
  discard(id: number): Promise<void>;
  /** A snapshot of the engine's state. */
  status(): Promise<SyncStatus>;
  /** Record a play position: durable when it resolves, uploaded at most once per `progressInterval`. */
  setProgress(ref: EpisodeRef, progress: ProgressChange): Promise<EpisodeState>;
  /** Mark an episode played (or not): durable when it resolves, uploaded at the next push; `total` gives its length (needed to mark it played when none is known). */
  markPlayed(ref: EpisodeRef, played?: boolean, opts?: { total?: number }): Promise<EpisodeState>;
  /** One episode's listening state. */
  episode(ref: EpisodeRef): Promise<EpisodeState | undefined>;
  /** Listening states, newest change first. */
  episodes(filter?: EpisodeFilter): Promise<EpisodeState[]>;
  /** Replace credentials; resumes a queue paused by 401/403. */
  setAuth(auth: Auth): Promise<void>;
  /** Wipe the local database (sign-out). */
  clear(): Promise<void>;
  /** Stop timers, release the lock, close the database. */
  close(): Promise<void>;
}

/** One frozen picture of the local state for a UI: the same object until something in it changes. */
export interface SyncSnapshot {
  /** False only until the first read of the local database (not the network): then the cached list is here. */
  readonly ready: boolean;
  /**
   * Why the last read of the local database failed (`storage`, a worker that restarted; `unsupported`: the worker
   * never loaded; `closed`: the client was closed); absent once a read succeeds. The store tries again with backoff
   * (from 250 ms, doubling, up to 30 s), but not after `closed` or `unsupported`.
   */
  readonly error?: ErrorInfo;
  /** The local view, as `subscriptions()` gives it; unchanged rows keep their identity across snapshots. */
  readonly subscriptions: readonly Subscription[];
  /** `pending()`, oldest first. */
  readonly pending: readonly PendingChange[];
  /** `failed()`, oldest first. */
  readonly failed: readonly FailedChange[];
  /** The latest `status` event (or `status()` before the first). */
  readonly status: SyncStatus;
  /** Only in a `store({ podcast })`: that feed's listening states as `episodes({ podcast })` gives them (`[]` where the protocol has none). */
  readonly episodes?: readonly EpisodeState[];
}

/** What `store.subscribe` takes: a function or an observer (`{ next }`, as RxJS and Angular's `toSignal` pass). */
export type SnapshotListener =
  | ((snapshot: SyncSnapshot) => void)
  | {
      /** Called with each new snapshot. */
      next(snapshot: SyncSnapshot): void;
    };

/** Stops a subscription; callable, and as `.unsubscribe()` (Svelte, Solid and RxJS all accept it). */
export interface Unsubscribe {
  (): void;
  /** The same as calling it. */
  unsubscribe(): void;
}

/** Options for `client.store()`. */
export interface StoreOptions {
  /** A feed URL: the snapshots also carry its episodes' listening state. */
  podcast?: string;
}

/** A reactive store of `SyncSnapshot`s: React's `useSyncExternalStore`, Svelte's store contract, Solid's `from`, Vue with `shallowRef`. */
export interface SyncStore {
  /** The current snapshot: the same object until its content changes. */
  getSnapshot(): SyncSnapshot;
  /** Call `listener` at once with the current snapshot and again with each new one. */
  subscribe(listener: SnapshotListener): Unsubscribe;
}

/** A feed for `exportOpml`: its URL, and the title the app knows it by (the protocols carry none). */
export interface OpmlFeed {
  /** The feed URL (the outline's `xmlUrl`). */
  feedUrl: string;
  /** Written as the outline's `text` and `title`; the feed URL when absent. */
  title?: string;
}

/**
 * Why an address was not added: `not-a-feed-url` (not an absolute http(s) URL: `javascript:`, `file:`, relative),
 * `duplicate` (named earlier in the same call), `no-feed-url` (an OPML entry without `xmlUrl`, not a folder).
 */
export type SkipReason = 'not-a-feed-url' | 'duplicate' | 'no-feed-url';

/** An address passed over, with why (`url` as it was given; absent when the entry named none). */
export interface OpmlSkip {
  /** The address as it was given. */
  url?: string;
  /** Why it was passed over. */
  reason: SkipReason;
}

/** What `addMany` and `importOpml` did: the feed URLs subscribed now, those the store had already, those passed over. */
export interface AddManyReport {
  /** Feed URLs queued for subscribing now. */
  added: string[];
  /** Feed URLs the store had subscribed already (nothing queued). */
  alreadyThere: string[];
  /** Addresses passed over, with why. */
  skipped: OpmlSkip[];
}

/** Options of `exportOpml`. */
export interface ExportOpmlOptions {
  /** The document's `<title>` (default "Podcast subscriptions"). */
  title?: string;
  /** Each feed's title (the protocols carry none): a record from feed URL to title, or a function; the URL where absent. */
  titles?: Readonly<Record<string, string>> | ((feedUrl: string) => string | undefined);
  /** The document's `<dateCreated>` (default now). */
  date?: Date;
}
