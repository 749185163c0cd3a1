import { guidAt, lastChange, type Entry } from './entry.ts';
import type { Random } from './random.ts';
import type { Store } from './store.ts';
import type { WireSubscriptionPage } from './types.ts';
import { toWire } from './wire.ts';

/** A validated list request. */
export interface ListQuery {
  /** Raw `since` text as sent (echoed into links), with its parsed value. */
  since?: { text: string; ms: number };
  page: number;
  perPage: number;
  /** Prefix of `next`/`previous` (an origin, or '' for relative links); undefined leaves them out. */
  linkBase?: string;
  /** Path of the list endpoint, e.g. `/v1/subscriptions`. */
  path: string;
}

/** Builds list pages; remembers the last filter result until the store changes. */
export interface Listing {
  page(query: ListQuery): WireSubscriptionPage;
  /** The next `count` pages are cut from a fresh shuffle of the matching entries. */
  reorder(count: number): void;
}

/** Create the list builder over `store`, shuffling with `random`. */
export function createListing(store: Store, random: Random): Listing {
  let cache: { version: number; since: number | undefined; items: readonly Entry[] } | undefined;
  let shuffles = 0;

  // One O(n) pass per store version and `since`; a drain of 200 pages then costs O(n) once, not 200 times.
  const matching = (since: number | undefined): readonly Entry[] => {
    if (cache && cache.version === store.version && cache.since === since) return cache.items;
    const all = store.entries();
    const items =
      since === undefined ? all.filter((e) => e.deleted === undefined && !e.into) : all.filter((e) => lastChange(e) > since);
    cache = { version: store.version, since, items };
    return items;
  };

  const link = (q: ListQuery, page: number): string => {
    const params = new URLSearchParams({ page: String(page), per_page: String(q.perPage) });
    if (q.since) params.set('since', q.since.text);
    return `${q.linkBase}${q.path}?${params}`;
  };

  return {
    page(q) {
      let items = matching(q.since?.ms);
      if (shuffles > 0) {
        shuffles--;
        items = random.shuffled(items);
      }
      const start = (q.page - 1) * q.perPage;
      const since = q.since?.ms;
      const links: Pick<WireSubscriptionPage, 'next' | 'previous'> = {};
      if (q.linkBase !== undefined) {
        if (start + q.perPage < items.length) links.next = link(q, q.page + 1);
        if (q.page > 1) links.previous = link(q, q.page - 1);
      }
      const subscriptions = items
        .slice(start, start + q.perPage)
        .map((e) => toWire(e, since === undefined ? e.guids[0] : guidAt(e, since)));
      return { total: items.length, page: q.page, per_page: q.perPage, ...links, subscriptions };
    },
    reorder(count) {
      shuffles = Math.max(0, Math.floor(count));
    },
  };
}
