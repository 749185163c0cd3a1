// Wire shapes of the Open Podcast API subscriptions endpoints (snake_case as on the wire), and the
// reference server's own view and control types. No logic here.

/** One entry of `GET /subscriptions` and the body of `GET /subscriptions/{guid}`. */
export interface WireSubscription {
  feed_url: string;
  guid: string;
  is_subscribed: boolean;
  subscription_changed?: string;
  new_guid?: string;
  guid_changed?: string;
  deleted?: string;
}

/** The body of `GET /subscriptions`. */
export interface WireSubscriptionPage {
  total: number;
  page: number;
  per_page: number;
  next?: string;
  previous?: string;
  subscriptions: WireSubscription[];
}

/** The body of `PATCH /subscriptions/{guid}` (at least one field). */
export interface WirePatchRequest {
  new_feed_url?: string;
  new_guid?: string;
  is_subscribed?: boolean;
}

/** The 200 body of `PATCH /subscriptions/{guid}`: only what changed. */
export interface WirePatchResult {
  new_feed_url?: string;
  is_subscribed?: boolean;
  subscription_changed?: string;
  new_guid?: string;
  guid_changed?: string;
}

/** One item of the `POST /subscriptions` body. */
export interface WireNewFeed {
  feed_url: string;
  guid?: string;
}

/** The body of `POST /subscriptions`. */
export interface WirePostRequest {
  subscriptions: WireNewFeed[];
}

/** One accepted item of the `POST /subscriptions` response. */
export interface WirePostSuccess {
  feed_url: string;
  guid: string;
  is_subscribed: boolean;
  subscription_changed: string;
}

/** One refused item of the `POST /subscriptions` response. */
export interface WirePostFailure {
  feed_url: string;
  message: string;
}

/** The 200 body of `POST /subscriptions`. */
export interface WirePostResult {
  success: WirePostSuccess[];
  failure: WirePostFailure[];
}

/** The body of a `DELETE /subscriptions/{guid}` answer (202, or 201 when configured). */
export interface WireDeletionAccepted {
  deletion_id: number;
  message: string;
}

/** Status of a deletion job. */
export type DeletionState = 'PENDING' | 'SUCCESS' | 'FAILURE';

/** The body of `GET /deletions/{id}`. */
export interface WireDeletionStatus {
  deletion_id: number;
  status: DeletionState;
  message: string;
}

/** Every error body; `code` is the HTTP status (a string only under `errorCodeAsString(true)`). */
export interface WireError {
  code: number | string;
  message: string;
}

/** A subscription as a client should end up seeing it (newest guid; collapsed entries left out). */
export interface ServerEntryView {
  guid: string;
  feed_url: string;
  is_subscribed: boolean;
  subscription_changed?: string;
  guid_changed?: string;
  deleted?: string;
  /** Every older guid that resolves to this entry: its own chain and entries collapsed into it. */
  old_guids: string[];
}

/** The body a PATCH carries, as the programmatic "other device" takes it. */
export type ForeignPatch = WirePatchRequest;

/** Selects which /v1 requests a fault applies to; omitted parts match anything. */
export interface FaultMatch {
  method?: string;
  /** Compared with the path below `/v1` (`/subscriptions`) or the full path (`/v1/subscriptions`). */
  path?: string | RegExp;
}

/** Shape of a faulty answer. */
export interface FaultOptions {
  /** Sent as the `Retry-After` header. */
  retryAfter?: string | number;
  /** Raw body instead of the JSON error body. */
  body?: string;
  /** Content-Type of `body` (default `text/plain; charset=utf-8`). */
  contentType?: string;
  /** Run the request for real first, then spoil its answer (a lost response). Default false. */
  afterHandling?: boolean;
}

/** One /v1 request as the server saw it (admin requests are not logged). */
export interface RequestLogEntry {
  method: string;
  /** Full path, e.g. `/v1/subscriptions`. */
  path: string;
  query: Record<string, string>;
  /** Status sent; 0 while the request is still being handled. */
  status: number;
  /** Request headers, lower-case names; credentials replaced by `<redacted>`. */
  headers: Record<string, string>;
  /** An Authorization header was sent. */
  authPresent: boolean;
  /** It carried an accepted bearer token. */
  authorized: boolean;
  /** Parsed JSON body, or the raw text when it was not JSON. */
  body?: unknown;
  /** Which fault spoiled the answer, if any. */
  fault?: 'fail' | 'drop' | 'malform';
  /** Arrival time (ms since epoch). */
  at: number;
}

/** How list responses carry `next` / `previous`. */
export type LinkStyle = 'absolute' | 'relative' | 'none';

/** Options of `startServer`. */
export interface ServerOptions {
  /** TCP port on 127.0.0.1; 0 picks a free one. @default 0 */
  port?: number;
  /** Accepted bearer token(s). @default 'demo-token' */
  token?: string | string[];
  /** Number of realistic entries to create at start. @default 0 */
  seed?: number;
  /** Delay before every /v1 answer, in ms. @default 0 */
  latencyMs?: number;
  /** Largest `per_page` honoured; larger values are capped. @default 500 */
  maxPerPage?: number;
  /** How long a deletion job stays PENDING, in ms. @default 30 */
  deletionDelayMs?: number;
  /** Status of a DELETE answer. @default 202 */
  deleteStatus?: 201 | 202;
  /** Style of `next` / `previous` links. @default 'absolute' */
  links?: LinkStyle;
  /** The server's time: its clock, latency and deletion-job timers (a simulation drives it). @default the wall clock */
  time?: ServerTime;
  /**
   * Seed of the server's random source: the guids it makes, the `seed` data, list reorders. Give one
   * for runs that must repeat (simulations, tests comparing guids). @default a new one every start, so a
   * restarted server never hands out a guid an earlier run did
   */
  randomSeed?: number;
  /** Keep the state in this JSON file (read at start, written atomically after every change); see the README. @default in memory only */
  dataFile?: string;
}

/** Where the server reads the time and sets its timers. */
export interface ServerTime {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The "another device" handle: same semantics as the HTTP operations, without HTTP. */
export interface ForeignDevice {
  /** Subscribe (upsert, like POST); throws on an invalid feed URL. */
  add(feedUrl: string, guid?: string): ServerEntryView;
  /** Change one subscription (like PATCH); throws with the HTTP status on 404/405/410. */
  patch(guid: string, body: ForeignPatch): WirePatchResult;
  /** Delete at once (a tombstone); throws on an unknown guid. */
  remove(guid: string): ServerEntryView;
}

/** Outcome of the next deletion jobs. */
export type DeletionOutcome = 'success' | 'failure';

/** A running reference server and its controls. */
export interface RefServer {
  /** Base URL a client is given, e.g. `http://127.0.0.1:8787/v1`. */
  readonly url: string;
  /** `http://127.0.0.1:PORT`. */
  readonly origin: string;
  readonly port: number;
  /** Stop listening, drop every socket, clear timers. */
  close(): Promise<void>;
  /** Back to the start state: no data (plus the `seed` option's entries), no faults, empty log. */
  reset(): void;
  /** Add `n` realistic subscriptions. */
  seed(n: number): ServerEntryView[];
  /** All subscriptions as a client should end up seeing them, deleted ones included, insertion order. */
  state(): ServerEntryView[];
  /** One subscription by any guid it ever had (chains and collapses followed). */
  entry(guid: string): ServerEntryView | undefined;
  /** Changes made by another device. */
  readonly foreign: ForeignDevice;
  /** Delay every /v1 answer by `ms`. */
  setLatency(ms: number): void;
  /** Answer the next `count` matching requests with `status` and an error body. */
  failNext(count: number, status: number, match?: FaultMatch, opts?: FaultOptions): void;
  /** Cut the next `count` matching responses mid-body. */
  dropNext(count: number, match?: FaultMatch, opts?: Pick<FaultOptions, 'afterHandling'>): void;
  /** Answer the next `count` matching requests with a body that is not valid JSON. */
  malformNext(count: number, match?: FaultMatch, body?: string, opts?: Pick<FaultOptions, 'afterHandling'>): void;
  /** Forget every queued fault. */
  clearFaults(): void;
  /** The next `count` list requests each see a fresh shuffle of the matching entries. */
  reorder(count: number): void;
  /** Outcome of the next `count` deletion jobs (all later ones when `count` is omitted). */
  deletionOutcome(outcome: DeletionOutcome, count?: number): void;
  /** How long new deletion jobs stay PENDING. */
  setDeletionDelay(ms: number): void;
  /** Send error `code` as a string ("404") instead of a number. */
  errorCodeAsString(on: boolean): void;
  /** Requests seen so far (oldest first). */
  log(): RequestLogEntry[];
  clearLog(): void;
}
