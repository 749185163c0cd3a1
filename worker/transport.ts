// The seam between the engine and a protocol. The engine (schedule, outbox, store) knows only this file:
// a transport pulls what changed into a sink and sends queued changes, answering with neutral outcomes.
import type { SyncError } from '../src/errors.ts';
import type { LastChanceRequest } from '../src/protocol.ts';
import type { StoredChange } from '../src/schema.ts';
import type { DeletionStatus, PullProgress } from '../src/types.ts';
import type { EpisodeTransport } from './episodes/actions.ts';

/** A server entry in the engine's terms: validated, protocol-neutral, its timestamps read once. */
export interface RemoteEntry {
  /** The guid as the server listed it (with a `since`, possibly an older link of a chain). */
  guid: string;
  /** The newest guid of the chain, when the guid changed. */
  newGuid?: string;
  feedUrl: string;
  isSubscribed: boolean;
  subscriptionChanged?: string;
  guidChanged?: string;
  deleted?: string;
  /** Greatest of the entry's timestamps in ms (0 when it has none): orders server states. */
  at: number;
  /** `subscriptionChanged` in ms (0 when absent): orders the feed address and flag on their own. */
  dataAt: number;
  /**
   * The guid names a server entity of its own, never an older name of another (gPodder: a URL). A row that
   * only has it as an old name is not its row: removed, it is that row's move echoed back; added, a row of its own.
   */
  standalone?: boolean;
  /**
   * From a full listing read after the server's clock stepped: the server's word, applied whatever the stored
   * stamps say (they may come from the other side of the step), its stamps becoming the row's.
   */
  authoritative?: boolean;
}

/** The server's own record of a subscription it just added. */
export interface AddedEntry {
  guid: string;
  feedUrl: string;
  isSubscribed: boolean;
  subscriptionChanged?: string;
}

/** What the server says changed by an update (fields it did not name are as sent). */
export interface UpdateResult {
  feedUrl?: string;
  isSubscribed?: boolean;
  subscriptionChanged?: string;
  newGuid?: string;
  guidChanged?: string;
}

/** Where a pull writes; each `apply` is one transaction. */
export interface PullSink {
  /** The stored cursor (a server time in ms), when a pull ever completed. */
  readonly cursor: number | undefined;
  /**
   * Server time the last completed pull said to re-read from when its newest entries were dense (an overlap
   * counted in entries, later than a fixed time before the cursor); undefined keeps the time overlap.
   */
  readonly tail?: number | undefined;
  /** Whether the store held nothing when the pull began (every row then is one this pull wrote). */
  readonly empty: boolean;
  /**
   * Store entries. With `complete`, this is the pull's last batch: the cursor commits with it (and, for a
   * full listing, every live row the listing did not name becomes a tombstone, or with `restate` is said
   * again when subscribed and the server's word on it is later than `restate`: a server whose clock went back
   * may hide it). Resolves whether the cursor
   * was committed (it is held back while an entry waits for a move under way, see `RemoteEntry.standalone`).
   */
  apply(entries: readonly RemoteEntry[], complete?: { cursor: number | undefined; listed?: ReadonlySet<string>; restate?: number; tail?: number }): Promise<boolean>;
  progress(progress: PullProgress): void;
}

/** One queued change to send, with the guid the server knows its subscription by (if it has one yet). */
export interface SendItem {
  change: StoredChange;
  target: string | undefined;
  /** The server's subscribed flag for it (a change that does not set the flag keeps this one). */
  isSubscribed?: boolean;
}

/** The server's answer to one sent change. */
export type SendOutcome =
  | { type: 'added'; entry: AddedEntry }
  | { type: 'updated'; result: UpdateResult }
  | { type: 'deletion-started'; deletionId: number }
  | { type: 'deleted' }
  | { type: 'deletion-pending' }
  | { type: 'deletion-failed'; message: string }
  /** Not sent this time (it would clash with another change in the same request): send it next. */
  | { type: 'deferred' }
  | { type: 'error'; error: SyncError };

/** One request of a plan (see `worker/plan.ts`) as a transport renders queued changes: what goes on the wire, and which changes it carries. */
export interface WireRequest {
  method: LastChanceRequest['method'] | 'GET';
  /** Relative to the base URL. */
  path: string;
  body?: unknown;
  items: SendItem[];
}

/** A plan's entry: a request, or changes that cannot go this time with their outcome (no request made). */
export type PlannedRequest = WireRequest | { items: SendItem[]; outcome: SendOutcome };

/** A protocol: how to pull, how to send, and what it can express. */
export interface Transport {
  /** Bound into the store with the server, so one database never mixes protocols. */
  readonly protocol: string;
  /**
   * How queued changes travel: requests of their own, several at once (`each`); or uploads of every ready change,
   * one after another, a subscription's flag changes folded behind its head (`all`).
   */
  readonly batching: 'each' | 'all';
  /** Whether a subscription's guid can be changed. */
  readonly guidChanges: boolean;
  /** Where a subscription's guid is its feed URL (gPodder): the guid for a feed URL. */
  readonly guidFor?: (feedUrl: string) => string;
  /** Pull everything changed since `sink.cursor`. */
  pull(sink: PullSink): Promise<void>;
  /** Render changes (with their addresses) as the requests that carry them, in the order they go. */
  plan(items: readonly SendItem[]): PlannedRequest[];
  /** Send one planned request (split where the server refuses its size) and read its answer: an outcome per item, in order. */
  send(request: WireRequest): Promise<SendOutcome[]>;
  /**
   * Which queued changes the page's last copy may carry: only a request harmless to send twice goes in it, whose
   * answer nobody reads (the plan's writes for them; a deletion job's GET never). Absent: every change.
   */
  readonly copies?: (change: StoredChange) => boolean;
  /** Listening state (episode actions), where the protocol has it. */
  readonly episodes?: EpisodeTransport;
  /** A deletion job's status, where the protocol has deletion jobs. */
  deletion?(id: number): Promise<DeletionStatus>;
}
