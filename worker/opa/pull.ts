// Open Podcast API pull: drain every page of what changed since the cursor into the sink.
import { SyncError } from '../../src/errors.ts';
import type { Clock } from '../../src/types.ts';
import { monotonicNow } from '../clock.ts';
import type { Http } from '../http.ts';
import { formatTimestamp } from '../time.ts';
import type { PullSink, RemoteEntry } from '../transport.ts';
import { toListedOnly, toRemoteEntry, type ListedOnly } from './entries.ts';
import { parsePage, type WirePage } from './wire.ts';

/** What an OPA pull needs. */
export interface OpaPullOptions {
  http: Http;
  clock: Clock;
  pageSize: number;
  /** ms re-fetched before the cursor: timestamp precision and commit-order gaps on the server. */
  overlap: number;
  /** Entries re-read at least when the newest ones are denser than `overlap` (see `tailOf`). */
  overlapEntries: number;
  /** How many times an inconsistent drain is repeated before giving up. */
  maxDrains: number;
}

/** A validated page with its entries already in the engine's terms. */
interface Page extends Omit<WirePage, 'subscriptions' | 'skipped'> {
  entries: RemoteEntry[];
  /** Entries listed but never stored (see `parsePage`): counted like the others, so a drain's checks hold. */
  skipped: ListedOnly[];
  /** How many entries the page listed, skipped ones included. */
  length: number;
}

const MAX_PAGES = 100_000;

/** Pull until the sink holds everything the server changed since its cursor. */
export async function pullOpa(options: OpaPullOptions, sink: PullSink): Promise<void> {
  const previous = sink.cursor;
  // A tail is at most the cursor less the timestamps' precision: it only ever shortens the time overlap.
  const from = previous === undefined ? undefined : Math.max(0, previous - options.overlap, Math.min(sink.tail ?? 0, previous - 1));
  const since = from === undefined ? undefined : formatTimestamp(from);
  for (let drain = 1; drain <= options.maxDrains; drain++) {
    // A full listing (no `since`) never shows deletions: rows it does not list are gone, unless this is the
    // first drain into an empty store (then every row is one it listed).
    const listed = since === undefined && !(sink.empty && drain === 1) ? new Set<string>() : undefined;
    if (await drainOnce(options, sink, since, drain === options.maxDrains, listed)) return;
  }
}

/** Walk the pages once; resolves whether the drain was consistent (and then completed the pull). */
async function drainOnce(options: OpaPullOptions, sink: PullSink, since: string | undefined, last: boolean, listed: Set<string> | undefined): Promise<boolean> {
  const { http, pageSize, clock } = options;
  // Elapsed time on the monotonic clock: a wall clock stepped back mid-drain would stretch `safe` below
  // into the future, and the cursor would pass entries this drain never saw.
  const started = monotonicNow(clock);
  const seen = new Set<string>();
  const totals = new Set<number>();
  let totalIsPageLength = true;
  let firstPageMax = 0;
  let maxAt = 0;
  let newest: Newest[] = [];
  let pages = 0;
  let longestPage = 0;
  /** Whether `total` is only ever the page's length (one server fills it so): then it bounds nothing. */
  let totalMayBePageLength = true;
  let url = http.url('subscriptions', { since, page: 1, per_page: pageSize });
  let pageNumber = 1;
  let repeats = 0;
  /** Whether this server's pages carry usable `next` links (then a page without one is the last). */
  let linked = false;

  const fetchPage = async (target: URL): Promise<Page> => {
    const { subscriptions, skipped, ...rest } = parsePage((await http.request('GET', target)).body, pageSize);
    return { ...rest, entries: subscriptions.map(toRemoteEntry), skipped: skipped.map(toListedOnly), length: subscriptions.length + skipped.length };
  };
  let inflight: Promise<Page> | undefined = fetchPage(url);

  while (inflight) {
    const page = await inflight;
    inflight = undefined;
    pages++;
    if (pages > MAX_PAGES) throw new SyncError('bad-response', `more than ${MAX_PAGES} pages: the server never ends the list`);
    let pageMax = 0;
    const before = seen.size;
    for (const entry of [...page.entries, ...page.skipped]) {
      seen.add(entry.guid);
      listed?.add(entry.newGuid ?? entry.guid);
      pageMax = Math.max(pageMax, entry.at);
      newest.push({ guid: entry.guid, at: entry.at });
    }
    if (newest.length > 4 * options.overlapEntries) newest = topEntries(newest, options.overlapEntries);
    // A server that ignores `page` would be walked forever: full pages with nothing new give it away.
    repeats = seen.size === before && page.length > 0 ? repeats + 1 : 0;
    if (repeats >= 3) throw new SyncError('bad-response', 'the server keeps answering pages already seen (is `page` ignored?)');
    if (pages === 1) firstPageMax = pageMax;
    maxAt = Math.max(maxAt, pageMax);
    totals.add(page.total);
    if (page.total !== page.length) totalIsPageLength = false;
    longestPage = Math.max(longestPage, page.length);
    if (pages > pageLimit([...totals], longestPage, totalMayBePageLength)) {
      // Nothing of this page is written and the cursor stays: the pages before it were applied, idempotently.
      throw new SyncError('bad-response', `${pages} pages for a listing of at most ${Math.max(...totals)} entries: the server's \`next\` never ends`);
    }

    const nextUrl = following(http, url, page, pageNumber, pageSize, linked);
    // A page that is not the last yet shorter than asked or shorter than its own total: `total` is a count.
    if (nextUrl !== undefined && (page.total !== page.length || page.length < Math.min(pageSize, page.per_page || pageSize))) totalMayBePageLength = false;
    if (usableNext(http, url, page)) linked = true;
    const isLast = nextUrl === undefined;
    let cursor: number | undefined;
    let tail: number | undefined;
    let consistent = true;
    if (isLast) {
      // Offset paging over unordered, changing data can skip entries: the counts tell.
      const total = [...totals][totals.size - 1]!;
      consistent = totalIsPageLength || (totals.size === 1 && seen.size >= total);
      if (consistent) {
        // A change made while we drained may sit on a page we had already read, with a timestamp below
        // entries we read later. Everything up to the server time of the first page is complete, and
        // that time is at least the first page's newest entry and at least maxAt minus the drain's length.
        // Never past maxAt: the cursor is a server time this drain (or an earlier one) saw.
        const elapsed = Math.max(0, monotonicNow(clock) - started);
        const safe = Math.min(maxAt, Math.max(firstPageMax, maxAt - elapsed - 1));
        cursor = Math.max(sink.cursor ?? 0, safe);
        if (sink.cursor === undefined && seen.size === 0) cursor = undefined;
        tail = cursor === undefined ? undefined : tailOf(topEntries(newest, options.overlapEntries), options.overlapEntries, cursor, sink.tail);
      } else if (last) {
        throw new SyncError(
          'bad-response',
          `the server's paging stayed inconsistent (${seen.size} distinct entries, total ${[...totals].join('/')}) after ${options.maxDrains} drains`,
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
    await sink.apply(page.entries, complete ? { cursor, ...(listed && { listed }), ...(tail === undefined ? {} : { tail }) } : undefined);
    sink.progress({ pages, entries: seen.size, ...(totals.size && { total: page.total }) });
    if (isLast) return consistent;
  }
  return true;
}

/** Pages a drain may read past what `total` allows before it is refused (entries added while it drains). */
const PAGE_SLACK = 10;

/**
 * How many pages a drain may read: twice the pages `total` needs at the longest page seen, plus slack. A
 * `next` chain that runs far past it (say `total: 1` for thousands of pages) is a server that never ends
 * the list. While `total` may be each page's length (full pages, each total equal to its length), it counts
 * nothing and only `MAX_PAGES` bounds the drain.
 */
function pageLimit(totals: number[], longestPage: number, totalMayBePageLength: boolean): number {
  if (totalMayBePageLength) return MAX_PAGES;
  return 2 * Math.ceil(Math.max(...totals) / Math.max(1, longestPage)) + PAGE_SLACK;
}

interface Newest {
  guid: string;
  at: number;
}

/** The `k` newest distinct entries, newest first. */
function topEntries(list: Newest[], k: number): Newest[] {
  const out: Newest[] = [];
  const guids = new Set<string>();
  for (const e of list.sort((a, b) => b.at - a.at)) {
    if (guids.has(e.guid)) continue;
    guids.add(e.guid);
    out.push(e);
    if (out.length === k) break;
  }
  return out;
}

/**
 * Where the next pull may start re-reading: just before the `k`th newest entry this drain saw (less the
 * timestamps' precision: a whole second when every one of them is whole). The time overlap guards against
 * commits landing out of timestamp order; when the newest entries are dense (a bulk import), re-reading `k`
 * of them covers that interleaving without re-reading every page of the last seconds. A drain of fewer
 * entries keeps the previous tail, which is older: the window only grows.
 */
function tailOf(top: Newest[], k: number, cursor: number, previous: number | undefined): number | undefined {
  if (top.length < k) return previous === undefined ? undefined : Math.min(previous, cursor - 1);
  const precision = top.every((e) => e.at % 1000 === 0) ? 1000 : 1;
  return Math.min(top[k - 1]!.at, cursor) - precision;
}

/** The page's `next` link when it may be followed (same origin as the base URL, not this page again). */
function usableNext(http: Http, current: URL, page: Page): URL | undefined {
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
function following(http: Http, current: URL, page: Page, pageNumber: number, pageSize: number, linked: boolean): URL | undefined {
  if (page.length === 0) return undefined;
  const link = usableNext(http, current, page);
  if (link) return link;
  if (page.next === undefined && linked) return undefined;
  const size = Math.min(pageSize, page.per_page || pageSize);
  if (page.length < size) return undefined;
  const next = new URL(current.href);
  next.searchParams.set('page', String(pageNumber + 1));
  next.searchParams.set('per_page', String(pageSize));
  return next;
}
