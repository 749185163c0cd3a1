// What the bench page exposes as `window.bench` (types only; shared by the page and the Node runner).
import type { EpisodeRef, EpisodeState, Subscription, SyncReport, SyncStatus } from '../../../src/types.ts';

/** Where and how to pull. */
export interface PullArgs {
  baseUrl: string;
  token: string;
  dbName: string;
  pageSize: number;
  /** A gPodder server instead (Basic auth as `username`:`token`); default the Open Podcast API (bearer `token`). */
  gpodder?: { username: string; device: string };
}

/** Main-thread responsiveness while something ran. */
export interface Responsiveness {
  /** Longest 'longtask' entry (tasks of 50 ms and more); 0 when there was none; null where the engine has no such entries (Firefox, WebKit). */
  longestTaskMs: number | null;
  longTasks: number;
  /** Largest lateness of a 10 ms timer loop: an upper bound on any task, even those under 50 ms. */
  maxLoopGapMs: number;
}

/** One engine pull on a fresh database, timed from before `createSyncClient` to `sync()` resolving. */
export interface EnginePullResult extends Responsiveness {
  ms: number;
  report: SyncReport;
  /** Rows in the engine's subscriptions table afterwards. */
  count: number;
  /** `change` events and guids the page received. */
  changeEvents: number;
  statusEvents: number;
}

/** One baseline pull, timed from before `new Worker` to its 'done' message. */
export interface BaselinePullResult {
  ms: number;
  requests: number;
  entries: number;
  count: number;
}

/** Options of the baseline worker (sent in its start message). */
export interface BaselineArgs extends PullArgs {
  /** Fetch page N+1 while page N is written (the engine does); default false: the plain loop. */
  prefetch?: boolean;
  /** Hold the worker until `afterHold` resolves (test/bench/profile.ts stops its profiler first). */
  hold?: boolean;
}

/** Messages from the baseline worker. */
export type BaselineMessage = { type: 'done'; requests: number; entries: number } | { type: 'error'; message: string };

/** A first sync of listening state: the engine from `createSyncClient` to `sync()` resolving. */
export interface EpisodeSyncResult {
  ms: number;
  report: SyncReport;
  /** Rows in the engine's episodes table afterwards. */
  count: number;
}

/** The episodes baseline: from `new Worker` to its 'done' message. */
export interface BaselineEpisodesResult {
  ms: number;
  /** Episode action pulls (GET) it made, and the subscription list's. */
  requests: number;
  actions: number;
  /** Rows in its episodes table (one per episode URL: the last action put wins). */
  count: number;
}

/** Messages from the episodes baseline worker. */
export type BaselineEpisodesMessage = { type: 'done'; requests: number; actions: number } | { type: 'error'; message: string };

/** Messages to the raw write worker: open its database, then one `put` per `row` message. */
export type RawWriteMessage = { type: 'open'; dbName: string } | { type: 'row' | 'edit'; row: { guid: string; feedUrl: string; isSubscribed: boolean; at: number } };

/** Messages to the bulk-put worker (the import's baseline): open its database, then one `bulkPut` per `put`. */
export type BulkPutMessage = { type: 'open'; dbName: string } | { type: 'put' | 'import'; prefix: string; urls: string[] };

/** One bulk add from the page, `client.importOpml(text)` or `client.addMany(urls)`, until the store shows every row. */
export interface ImportResult {
  /** The call → the first snapshot of `client.store()` holding every row (the list before plus the feeds added). */
  ms: number;
  /** The call → its promise resolving (the report in the page). */
  callMs: number;
  /** The call → the `change` event that names the feeds reaching the page (the engine's write committed). */
  eventMs: number;
  /** Snapshots the store made from the call until that one (it included). */
  snapshots: number;
  /** Snapshots it made in the 500 ms after it (status and queue updates). */
  snapshotsAfter: number;
  added: number;
  alreadyThere: number;
  skipped: number;
}

/** Client options a run sets beyond `PullArgs`. */
export interface OpenExtra {
  pushDelay?: number;
  retry?: { baseDelay?: number; maxDelay?: number };
  /** Run the engine in pages/counting-worker.ts, whose fetches `fetches()` lists. */
  countFetches?: boolean;
}

/** One fetch the engine made (counting-worker.ts). */
export interface FetchSeen {
  method: string;
  url: string;
  /** Date.now() when it was called. */
  at: number;
}

/** `window.bench`. */
export interface BenchApi {
  enginePull(args: PullArgs): Promise<EnginePullResult>;
  baselinePull(args: BaselineArgs): Promise<BaselinePullResult>;
  /** Terminate a baseline worker kept by `hold`. */
  releaseBaseline(): Promise<void>;
  /** Start a long-lived client (for incremental pulls, updates and replay). */
  open(args: PullArgs, extra?: OpenExtra): Promise<void>;
  /** `client.sync()` on the open client, timed. */
  sync(): Promise<{ ms: number; report: SyncReport }>;
  /** Sequential `client.update()` calls; the round trip of each in ms. */
  updates(plan: { guid: string; change: { isSubscribed?: boolean; feedUrl?: string } }[]): Promise<number[]>;
  /**
   * The same updates, each followed by one raw write round trip (page → plain worker → one IndexedDB `put` →
   * `complete` → page) and one least edit (`edit` in raw-write-worker.ts) into a database of `rawDb`: the
   * platform's limits, measured under the same conditions.
   */
  updatesWithRaw(plan: { guid: string; change: { isSubscribed?: boolean; feedUrl?: string } }[], rawDb: string): Promise<{ engine: number[]; raw: number[]; edit: number[] }>;
  /** `client.subscription(guid)` on the open client. */
  subscription(guid: string): Promise<Subscription | undefined>;
  status(): Promise<SyncStatus>;
  pendingCount(): Promise<number>;
  /** Milliseconds from the last `online` event until `pending()` is empty (polled every 5 ms). */
  drainedAfterOnline(timeoutMs: number): Promise<number>;
  /** A first sync of a gPodder account's listening state on a fresh database (`args.gpodder` required). */
  episodeFirstSync(args: PullArgs): Promise<EpisodeSyncResult>;
  /** The naive baseline of the same: fetch the same answers, `bulkPut` each page's actions into a plain Dexie table. */
  baselineEpisodes(args: PullArgs): Promise<BaselineEpisodesResult>;
  /** Sequential `client.setProgress()` calls on the open client. */
  progress(plan: { ref: EpisodeRef; position: number; total: number }[]): Promise<void>;
  /** `client.episode(ref)` on the open client. */
  episode(ref: EpisodeRef): Promise<EpisodeState | undefined>;
  /** Milliseconds from the last `online` event until `status().pendingEpisodes` is 0 (polled every 5 ms). */
  episodesDrainedAfterOnline(timeoutMs: number): Promise<number>;
  /**
   * `client.store()` of the open client (its `n` rows shown first), then one `update()` per guid, each at rest
   * (the last push done), each timed from the `change` event reaching the page to the store's snapshot that
   * shows it; `readMs`: from the event to the last of the store's reads answering, so the rest is the store's own.
   */
  storeChanges(n: number, guids: string[]): Promise<{ totalMs: number[]; readMs: number[] }>;
  /** Mount `client.store({ podcast })` of the open client (a listener looks at each snapshot); resolves once it shows `episodes` episodes. */
  mountEpisodeStore(podcast: string, episodes: number): Promise<void>;
  /** `client.setProgress` of `episode` once a second for `seconds` s; resolves with the snapshots the mounted store made meanwhile. */
  play(ref: { podcast: string; episode: string }, seconds: number): Promise<{ calls: number; snapshots: number }>;
  /**
   * Mount `client.store()` of the open client (once it shows the rows `subscriptions()` reads), then
   * `client.importOpml(input)` (a string) or `client.addMany(input)` (feed URLs), timed until it shows `expected` more.
   */
  timedImport(kind: 'importOpml' | 'addMany', input: string | string[], expected: number): Promise<ImportResult>;
  /**
   * Load the client's OPML code (a chunk of its own, loaded on first use) with `exportOpml()`: offline, with no
   * service worker caching it, a first `importOpml` cannot fetch it.
   */
  loadOpml(): Promise<void>;
  /** Start the import's baseline worker on database `dbName` (opened, and warmed with one small `bulkPut`). */
  openBulkBaseline(dbName: string): Promise<void>;
  /** One `bulkPut` of `urls` as rows in the baseline worker (`import`: the least import), page → worker → committed → page, in ms. */
  bulkPutBaseline(prefix: string, urls: string[], kind?: 'put' | 'import'): Promise<number>;
  closeBulkBaseline(): Promise<void>;
  /** `client.add(url)` of each of `urls`, evenly spread over `spanMs` (not waiting for one before the next), all settled. */
  addsSpread(urls: string[], spanMs: number): Promise<void>;
  /** The fetches the engine of a client opened with `countFetches` made since it started. */
  fetches(): Promise<FetchSeen[]>;
  /** Close the open client (terminating its worker). */
  close(): Promise<void>;
  /** Delete a database; false when it did not finish within `timeoutMs` (a connection somewhere keeps it open). */
  deleteDb(name: string, timeoutMs: number): Promise<boolean>;
}

declare global {
  interface Window {
    bench: BenchApi;
  }
}
