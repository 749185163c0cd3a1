// Pull: drain every page of what changed since the cursor into the store.
import { SyncError } from '../src/errors.ts';
import type { PullProgress } from '../src/types.ts';
import type { Http } from './http.ts';
import type { FreshPull, Store } from './store.ts';
import { entryTime } from './store.ts';
import { formatTimestamp } from './time.ts';
import { parsePage, type WirePage } from './wire.ts';

/** What a pull needs. */
export interface PullContext {
  http: Http;
  store: Store;
  pageSize: number;
  /** ms re-fetched before the cursor: timestamp precision and commit-order gaps on the server. */
  overlap: number;
  /** How many times an inconsistent drain is repeated before giving up. */
  maxDrains: number;
  onProgress(progress: PullProgress): void;
  /** Guids whose view changed, per committed page. */
  onChange(guids: string[]): void;
}

/** The result of a completed pull. */
export interface PullResult {
  /** Rows whose local view changed. */
  applied: number;
  cursor?: number;
  drains: number;
}

const MAX_PAGES = 100_000;

/** Pull until the store holds everything the server changed since the cursor. */
export async function pull(ctx: PullContext): Promise<PullResult> {
  const previous = await ctx.store.cursor();
  const epoch = await ctx.store.epoch();
  const since = previous === undefined ? undefined : formatTimestamp(Math.max(0, previous - ctx.overlap));
  const fresh: FreshPull | undefined = previous === undefined && (await ctx.store.isEmpty()) ? { written: new Set() } : undefined;
  let applied = 0;
  for (let drain = 1; drain <= ctx.maxDrains; drain++) {
    // A full listing (no `since`) never shows deletions: rows it does not list are gone, unless this is the
    // first drain into an empty store (then every row is one it listed).
    const snapshot = since === undefined && !(fresh && drain === 1) ? new Set<string>() : undefined;
    const result = await drainOnce(ctx, since, previous, drain === ctx.maxDrains, fresh, snapshot, epoch);
    applied += result.applied;
    if (result.consistent) return { applied, cursor: result.cursor, drains: drain };
  }
  // Unreachable: the last drain throws when inconsistent.
  throw new SyncError('bad-response', 'pull did not complete');
}

interface DrainResult {
  applied: number;
  consistent: boolean;
  cursor?: number;
}

async function drainOnce(
  ctx: PullContext,
  since: string | undefined,
  previous: number | undefined,
  last: boolean,
  fresh: FreshPull | undefined,
  snapshot: Set<string> | undefined,
  epoch: string | undefined,
): Promise<DrainResult> {
  const { http, store, pageSize } = ctx;
  const started = Date.now();
  const seen = new Set<string>();
  const totals = new Set<number>();
  let totalIsPageLength = true;
  let firstPageMax = 0;
  let maxAt = 0;
  let applied = 0;
  let pages = 0;
  let url = http.url('subscriptions', { since, page: 1, per_page: pageSize });
  let pageNumber = 1;
  let repeats = 0;
  /** Whether this server's pages carry usable `next` links (then a page without one is the last). */
  let linked = false;

  const fetchPage = async (target: URL): Promise<WirePage> => parsePage((await http.request('GET', target)).body, pageSize);
  let inflight: Promise<WirePage> | undefined = fetchPage(url);

  while (inflight) {
    const page = await inflight;
    inflight = undefined;
    pages++;
    if (pages > MAX_PAGES) throw new SyncError('bad-response', `more than ${MAX_PAGES} pages: the server never ends the list`);
    let pageMax = 0;
    const before = seen.size;
    for (const entry of page.subscriptions) {
      seen.add(entry.guid);
      snapshot?.add(entry.new_guid ?? entry.guid);
      pageMax = Math.max(pageMax, entryTime(entry));
    }
    // A server that ignores `page` would be walked forever: full pages with nothing new give it away.
    repeats = seen.size === before && page.subscriptions.length > 0 ? repeats + 1 : 0;
    if (repeats >= 3) throw new SyncError('bad-response', 'the server keeps answering pages already seen (is `page` ignored?)');
    if (pages === 1) firstPageMax = pageMax;
    maxAt = Math.max(maxAt, pageMax);
    totals.add(page.total);
    if (page.total !== page.subscriptions.length) totalIsPageLength = false;

    const nextUrl = following(http, url, page, pageNumber, pageSize, linked);
    if (usableNext(http, url, page)) linked = true;
    const isLast = nextUrl === undefined;
    let cursor: number | undefined;
    let consistent = true;
    if (isLast) {
      // Offset paging over unordered, changing data can skip entries: the counts tell.
      const total = [...totals][totals.size - 1]!;
      consistent = totalIsPageLength || (totals.size === 1 && seen.size >= total);
      if (consistent) {
        // A change made while we drained may sit on a page we had already read, with a timestamp below
        // entries we read later. Everything up to the server time of the first page is complete, and
        // that time is at least the first page's newest entry and at least maxAt minus the drain's length.
        const safe = Math.max(firstPageMax, maxAt - (Date.now() - started) - 1);
        cursor = Math.max(previous ?? 0, safe);
        if (previous === undefined && seen.size === 0) cursor = undefined;
      } else if (last) {
        throw new SyncError(
          'bad-response',
          `the server's paging stayed inconsistent (${seen.size} distinct entries, total ${[...totals].join('/')}) after ${ctx.maxDrains} drains`,
        );
      }
    } else {
      url = nextUrl;
      pageNumber++;
      // Fetch the next page while this one is written.
      inflight = fetchPage(url);
      inflight.catch(() => undefined);
    }
    const complete = isLast && consistent;
    const { changed } = await store.applyEntries(page.subscriptions, complete ? cursor : undefined, fresh, complete ? snapshot : undefined, epoch);
    applied += changed.length;
    if (changed.length) ctx.onChange(changed);
    ctx.onProgress({ pages, entries: seen.size, ...(totals.size ? { total: page.total } : {}) });
    if (isLast) return { applied, consistent, ...(cursor !== undefined ? { cursor } : {}) };
  }
  return { applied, consistent: true };
}

/** The page's `next` link when it may be followed (same origin as the base URL, not this page again). */
function usableNext(http: Http, current: URL, page: WirePage): URL | undefined {
  if (page.next === undefined) return undefined;
  try {
    const next = new URL(page.next, current);
    // A `next` on another origin is never followed: credentials go to the base URL's origin only.
    return http.sameOrigin(next) && next.href !== current.href ? next : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The next page's URL, or undefined when this page is the last. `total` never ends a drain (it may be
 * wrong); a short or empty page does, and so does a missing `next` from a server that gave one before.
 */
function following(http: Http, current: URL, page: WirePage, pageNumber: number, pageSize: number, linked: boolean): URL | undefined {
  if (page.subscriptions.length === 0) return undefined;
  const link = usableNext(http, current, page);
  if (link) return link;
  if (page.next === undefined && linked) return undefined;
  const size = Math.min(pageSize, page.per_page || pageSize);
  if (page.subscriptions.length < size) return undefined;
  const next = new URL(current.href);
  next.searchParams.set('page', String(pageNumber + 1));
  next.searchParams.set('per_page', String(pageSize));
  return next;
}
