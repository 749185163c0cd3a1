import type { GpodderRowView } from './types.ts';

/** One subscribe or unsubscribe, at the server's time in ms. */
export interface Change {
  url: string;
  subscribed: boolean;
  at: number;
}

/** The URLs a pull answers with. */
export interface Delta {
  add: string[];
  remove: string[];
}

/** One subscription list (a device's, or a user's): the latest state per URL and every change made. */
export interface SubscriptionList {
  /**
   * Record a change. With `always` false a change to the state the URL is already in is no change
   * (mygpo); with `always` true it is written and re-stamped anyway (opodsync, the Nextcloud app).
   * Returns whether anything was written.
   */
  set(url: string, subscribed: boolean, at: number, always: boolean): boolean;
  isSubscribed(url: string): boolean;
  /** Whether the URL has a row at all (subscribed or not). */
  has(url: string): boolean;
  /** mygpo's pull: the net effect of the changes in (`afterMs`, `untilMs`]. */
  netChanges(afterMs: number, untilMs: number): Delta;
  /** The opodsync / Nextcloud pull: every URL whose last change's second passes `keep`, by its state. */
  rowsChangedIn(keep: (second: number) => boolean): Delta;
  rows(): GpodderRowView[];
  /** Every change recorded, oldest first (`--data` keeps them; replaying them with `always` rebuilds the list). */
  changes(): readonly Change[];
}

const second = (ms: number): number => Math.floor(ms / 1000);

/** Create an empty list. */
export function createList(): SubscriptionList {
  const latest = new Map<string, Change>();
  const history: Change[] = [];
  return {
    set(url, subscribed, at, always) {
      if (!always && (latest.get(url)?.subscribed ?? false) === subscribed) return false;
      const change = { url, subscribed, at };
      latest.set(url, change);
      history.push(change);
      return true;
    },
    isSubscribed: (url) => latest.get(url)?.subscribed ?? false,
    has: (url) => latest.has(url),
    netChanges(afterMs, untilMs) {
      // Each URL's changes alternate (no-ops are not recorded), so the net count is -1, 0 or +1.
      const net = new Map<string, number>();
      for (const c of history) {
        if (c.at > afterMs && c.at <= untilMs) net.set(c.url, (net.get(c.url) ?? 0) + (c.subscribed ? 1 : -1));
      }
      const delta: Delta = { add: [], remove: [] };
      for (const [url, n] of net) {
        if (n > 0) delta.add.push(url);
        else if (n < 0) delta.remove.push(url);
      }
      return delta;
    },
    rowsChangedIn(keep) {
      const delta: Delta = { add: [], remove: [] };
      for (const c of latest.values()) {
        if (keep(second(c.at))) (c.subscribed ? delta.add : delta.remove).push(c.url);
      }
      return delta;
    },
    changes: () => history,
    rows: () => Array.from(latest.values(), (c) => ({ url: c.url, subscribed: c.subscribed, changed: second(c.at) })),
  };
}
