// The records an opa-sync store holds, one interface per table row (the Dexie schema is in schema.ts).
import type { ChangeKind, ErrorInfo, SubscriptionChange } from './types.ts';

/** The server's last known state of a subscription (what a pull or an acknowledgement said). */
export interface ServerBase {
  /** The newest guid the server knows this subscription by. */
  guid: string;
  /** The feed URL the server gave. */
  feedUrl: string;
  /** Whether the server has it subscribed. */
  isSubscribed: boolean;
  /** Server time (ISO) the flag or feed URL last changed. */
  subscriptionChanged?: string;
  /** Server time (ISO) the guid last changed. */
  guidChanged?: string;
  /** Server time (ISO) of its deletion. */
  deleted?: string;
  /** Greatest of the timestamps above in ms (0 when the server gave none): orders server states. */
  at: number;
  /** `subscriptionChanged` in ms (0 when absent): orders the feed address and flag on their own. */
  dataAt: number;
}

/** One row of the `subscriptions` table: the local view (keyed by the guid the app sees) and its server base. */
export interface StoredSubscription {
  /** The key: the guid the app sees (`Subscription.guid`). */
  guid: string;
  /** The feed URL, queued changes applied. */
  feedUrl: string;
  /** The subscribed flag, queued changes applied. */
  isSubscribed: boolean;
  /** Server time of the deletion, or the local time a deletion was requested (while pending). */
  deleted?: string;
  /** Number of queued changes folded into this view (0: the view is the server base). */
  pending: number;
  /** Set while the row has changes the server refused (listed by `failed()`). */
  hasFailed?: boolean;
  /** Absent for a local add the server has not acknowledged yet. */
  base?: ServerBase;
}

/** Where a queued change stands: `queued` to be sent; `failed`, refused for good (`failed()`); `deleting`, a removal the server accepted whose deletion job is polled. */
export type OutboxState = 'queued' | 'failed' | 'deleting';

/** Who handed a change out, when (device time), and how many pulls the store had completed then. */
export interface Handout {
  /** Who: a page's engine (`tab`), the service worker (`sw`), or the page's last-chance copy (`copy`). */
  by: 'tab' | 'sw' | 'copy';
  /** Device time (ms since epoch) it was handed out. */
  at: number;
  /** Pulls the store had completed then: one completed since means the server's word on it came. */
  pull: number;
}

/** One row of the `outbox` table: a local change waiting for the server. */
export interface StoredChange {
  /** The auto-increment key (`PendingChange.id`); absent only before the row is written. */
  id?: number;
  /** The target row's guid (kept in step when rows are re-keyed). */
  guid: string;
  /** What it does. */
  kind: ChangeKind;
  /** `add`: the feed URL to POST. */
  feedUrl?: string;
  /** `add`: a guid parsed from the feed itself. */
  addGuid?: string;
  /** `update`: the change to PATCH. */
  change?: SubscriptionChange;
  /** The guid to address on the server when it was known at enqueue time (the server follows chains). */
  serverGuid?: string;
  /** Where it stands. */
  state: OutboxState;
  /** Stable from its creation (the shape of the Open Podcast API sync draft's `action_id`), for idempotency keys. */
  actionId?: string;
  /**
   * Its delivery state, the same for every context: absent, never handed out; set, handed out (written before the
   * request leaves) and so it may have reached the server; acknowledged, it leaves the queue; refused, `state` is
   * `failed`. Stores written before issue 31 may hold `true` here (handed out, before any pull).
   */
  sent?: Handout;
  /**
   * Held in a last copy some page was told of (written before the page holds it): the page may send it as it goes,
   * so it is never folded away (see `mayHaveLeft` in worker/store/delivery.ts), whatever happens to that page.
   */
  copied?: true;
  /**
   * An add's: the newest server time (ms) this store knew of its feed (the cursor, and every row of that guid or
   * feed) when it was first handed out, and whether that word had the feed subscribed (`sentOver`; absent: no
   * word). A later server word that differs from it is the server's word after the add may have reached it: the
   * add is settled by it (see `handOut` in worker/store/acks.ts). One that restates it says nothing of the add.
   */
  sentAfter?: number;
  /** An add's: whether the server's word at `sentAfter` had the feed subscribed (absent: no word). */
  sentOver?: boolean;
  /**
   * Queued behind a deletion of its subscription by `remove()`: dropped once the deletion succeeds, sent (and
   * shown) if the server refuses it or rolls it back.
   */
  held?: boolean;
  /** Bumped on every edit, so an acknowledgement only removes the version that was sent. */
  version: number;
  /** Tries that failed with a transient error (the backoff grows with them); reset by `retry()`. */
  attempts: number;
  /** Device time before which it is not retried. */
  notBefore: number;
  /**
   * Device time before which even a forced push waits: the server asked (Retry-After), or its last 2xx could
   * not be read (a proxy answering for it: sending at once would spin).
   */
  serverHold?: number;
  /** Device time the hold above was set: a clock that went back before it ends the hold (never longer than set). */
  heldAt?: number;
  /** Device time (ms since epoch) the change was made. */
  createdAt: number;
  /** The last transient error, or (`state: 'failed'`) why the server refused it. */
  lastError?: ErrorInfo;
  /** `state: 'deleting'`: the server's deletion job being polled. */
  deletionId?: number;
}

/** The one local change of an episode waiting for the server. */
export interface PendingEpisode {
  /** Bumped on every local change: an acknowledgement clears only the version that was sent. */
  version: number;
  /** Device time of the change. */
  at: number;
  /** The fields it set: once newer remote values hold all of them, it is overtaken and never sent. */
  fields: ('position' | 'total' | 'played')[];
  /** The position before this change began (the upload's `started`: where this stretch of listening began). */
  from?: number;
  /**
   * The version of its latest part that does not wait for the progress interval (a played mark): that part goes
   * at the next push, even when an upload of an earlier version settles meanwhile.
   */
  urgent?: number;
  /** Uploads that failed with a transient error (the backoff grows with them). */
  attempts: number;
  /** Device time before which it waits even when an upload goes anyway: the server asked (Retry-After). */
  serverHold?: number;
  /** 5xx answers in a row to the uploads that carried it (a lost connection is no answer and leaves it; another answer resets it). */
  serverErrors?: number;
  /** The last transient error of an upload that carried it. */
  lastError?: ErrorInfo;
}

/** One row of the `episodes` table: an episode's identity and listening state (see worker/episodes/register.ts). */
export interface StoredEpisode {
  /** Local key: the feed URL and the guid (or the media key when there is none) at creation. */
  id: string;
  /** The podcast's feed URL. */
  podcast: string;
  /** The enclosure URL as last given (or as the server's upload answer rewrote it). */
  episode: string;
  /** The URL the server's upload answer rewrote to `episode`: the app naming it again does not bring it back. */
  renamedFrom?: string;
  /** The enclosure URL without query or fragment: the identity when there is no guid. */
  media: string;
  /** The episode's RSS guid, once the app or the server named one. */
  guid?: string;
  /** The play position and when it was set. */
  position?: {
    /** Seconds into the episode. */
    value: number;
    /** Time (ms since epoch) of the change that set it, on the device that made it. */
    at: number;
  };
  /** The episode's length and when it was set. */
  total?: {
    /** Seconds. */
    value: number;
    /** Time (ms since epoch) of the change that set it, on the device that made it. */
    at: number;
  };
  /** The played mark and when it was set. */
  played?: {
    /** Whether it is played. */
    value: boolean;
    /** Time (ms since epoch) of the change that set it, on the device that made it. */
    at: number;
  };
  /** The local change waiting for the server, if any. */
  pending?: PendingEpisode;
  /** Device time from which the pending change may be uploaded (indexed only while one is pending). */
  due?: number;
  /** Device time `due` was set at: a clock read before it means the clock stepped back, and the wait is over. */
  heldAt?: number;
  /** Device time of the last upload (throttles progress). */
  sentAt?: number;
  /** The (started, position) pairs uploaded, newest last: mygpo drops a repeat (worker/episodes/upload-play.ts). */
  sent?: [number, number][];
  /** Why the server refused its last change for good; cleared by the episode's next change. */
  error?: ErrorInfo;
}

/** One row of the `aliases` table: `from` was replaced by `to` (server guid chains and local re-keys). */
export interface StoredAlias {
  /** The old guid (the key). */
  from: string;
  /** The guid that replaced it (which may itself have been replaced since). */
  to: string;
}

/** One row of the `meta` table. */
export interface StoredMeta {
  /** What the row keeps (`cursor`, `pulls`, `binding`, …): the engine's own, not a stable format. */
  key: string;
  /** Its value, as the engine wrote it. */
  value: unknown;
}
