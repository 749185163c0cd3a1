// Bringing a library in (issue 33): a player's OPML file of many feeds imported from the page, offline, against
// a plain worker's one `bulkPut` of as many rows in the same run; how many snapshots the page's store made for it;
// and how many requests the server sees when the network comes back (Open Podcast API and gPodder, mygpo).
import { randomUUID } from 'node:crypto';
import { startGpodderServer } from '../server/gpodder/server.ts';
import { startServer } from '../server/server.ts';
import type { RequestLogEntry } from '../server/types.ts';
import type { BrowserPage } from '../support/browsers.ts';
import type { ImportResult, PullArgs } from './pages/api.ts';
import { call, type BenchBrowser } from './support/browser.ts';
import { median, round } from './support/stats.ts';

/** What the import section runs. */
export interface ImportPlan {
  /** Feeds in each import, into an account of `existing` subscriptions; `runs` of importOpml and of addMany each (OPA). */
  feeds: number;
  existing: number;
  runs: number;
  /** importOpml runs against the gPodder server (the reconnect's uploads). */
  gpodderRuns: number;
}

export const FULL_IMPORT: ImportPlan = { feeds: 1_000, existing: 100, runs: 5, gpodderRuns: 3 };
/** The smoke run's: a small file, one run of each. */
export const QUICK_IMPORT: ImportPlan = { feeds: 200, existing: 10, runs: 1, gpodderRuns: 1 };

/** One call's figures over the runs. */
export interface ImportCallFigures {
  runs: number;
  /** Medians: the page call → the store's snapshot with every row; the call → its report; the baseline's bulkPut round trip. */
  ms: number;
  callMs: number;
  /** The call → the `change` event in the page (the rest of `ms` is the store's reads and its snapshot). */
  eventMs: number;
  baselineMs: number;
  /**
   * The least import (`import` in pages/bulk-put-worker.ts, run beside it): one transaction reads the keys the
   * rows land on, then writes the rows and a queue entry each. Median ms, and its ratio to `baselineMs`.
   */
  leastMs: number;
  leastRatio: number;
  /** ms / baselineMs (ratio of the medians), and the median of the per-run ratios. */
  ratio: number;
  pairedRatio: number;
  /** Snapshots the store made from the call to the one showing every row, the most of any run; and in the 500 ms after. */
  snapshots: number;
  snapshotsAfter: number;
  msRuns: number[];
  baselineRunsMs: number[];
}

/** One timed import with its two baselines, run beside it. */
type ImportRun = { r: ImportResult; baselineMs: number; leastMs: number };

/** Requests after the network came back, medians of the runs. */
export interface ReconnectFigures {
  /** Requests that carried the adds (OPA: POST /subscriptions; gPodder: subscription uploads). */
  requests: number;
  /** Every request after going online (the pulls too), CORS preflights apart. */
  totalRequests: number;
  preflights: number;
  /** From `online` until the queue is empty. */
  ms: number;
}

/** The import section's figures (`import` in the JSON). */
export interface ImportFigures {
  feeds: number;
  existing: number;
  importOpml: ImportCallFigures;
  addMany: ImportCallFigures;
  /** After an offline import, the network back: Open Podcast API (importOpml and addMany runs) and gPodder (importOpml). */
  reconnect: { opa: ReconnectFigures; gpodder: ReconnectFigures & { runs: number } };
  method: string;
}

const USER = 'alice';
const PASSWORD = 'alice-password';
const DEVICE = 'bench-import';
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The feed URLs of run `label`. */
export const importFeeds = (label: string, n: number) => Array.from({ length: n }, (_, i) => `https://feeds.example/import/${label}/show-${i}.xml`);

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** An OPML 2.0 file as players export it: a BOM, CRLF, feeds in categories of 50, titles with entities. */
export function opmlOf(urls: string[]): string {
  const lines = ['\uFEFF<?xml version="1.0" encoding="UTF-8"?>', '<opml version="2.0">', '  <head><title>Podcasts &amp; more</title></head>', '  <body>'];
  for (let c = 0; c < urls.length; c += 50) {
    lines.push(`    <outline text="Category ${c / 50}" title="Category ${c / 50}">`);
    for (const [i, url] of urls.slice(c, c + 50).entries()) {
      const title = escape(`Show ${c + i} — "Talk" & <News>`);
      lines.push(`      <outline type="rss" text="${title}" title="${title}" xmlUrl="${escape(url)}" htmlUrl="https://shows.example/${c + i}"/>`);
    }
    lines.push('    </outline>');
  }
  lines.push('  </body>', '</opml>');
  return lines.join('\r\n');
}

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** What a server logged after going online: the adds' requests, every request, preflights. */
function counted(log: RequestLogEntry[], isAdd: (e: RequestLogEntry) => boolean) {
  const real = log.filter((e) => e.method !== 'OPTIONS');
  return { requests: real.filter(isAdd).length, totalRequests: real.length, preflights: log.length - real.length };
}

interface LoggingServer {
  log(): RequestLogEntry[];
  clearLog(): void;
}

/**
 * On the open client of `page`: offline, the import timed (and the baseline's bulkPut beside it, first or second by
 * `baselineFirst`), nothing sent; online, the queue drained. Resolves with both times and the requests after.
 */
async function offlineImport(
  browser: BenchBrowser,
  page: BrowserPage,
  server: LoggingServer,
  kind: 'importOpml' | 'addMany',
  urls: string[],
  label: string,
  baselineFirst: boolean,
) {
  // The bench page has no service worker: its OPML chunk is loaded while online, as an app's would be cached.
  await call(page, 'loadOpml');
  await browser.context.setOffline(true);
  try {
    await waitUntil('the worker to see the page offline', async () => !(await call(page, 'status')).online);
    server.clearLog();
    const baseline = () => call(page, 'bulkPutBaseline', label, importFeeds(`${label}-baseline`, urls.length));
    const least = () => call(page, 'bulkPutBaseline', `${label}-least`, importFeeds(`${label}-least`, urls.length), 'import');
    const baselineBefore = baselineFirst ? await baseline() : undefined;
    const leastBefore = baselineFirst ? await least() : undefined;
    const r: ImportResult = await call(page, 'timedImport', kind, kind === 'importOpml' ? opmlOf(urls) : urls, urls.length);
    const baselineMs = baselineBefore ?? (await baseline());
    const leastMs = leastBefore ?? (await least());
    if (r.added !== urls.length) throw new Error(`bench: ${kind} added ${r.added} of ${urls.length} feeds (${r.alreadyThere} already there, ${r.skipped} skipped)`);
    const sentOffline = server.log().filter((e) => e.method !== 'OPTIONS').length;
    if (sentOffline) throw new Error(`bench: ${sentOffline} requests went out while offline`);
    server.clearLog();
    await browser.context.setOffline(false);
    const drainMs = await call(page, 'drainedAfterOnline', 120_000);
    return { r, baselineMs, leastMs, drainMs, log: server.log() };
  } finally {
    await browser.context.setOffline(false).catch(() => undefined);
  }
}

function callFigures(rows: ImportRun[]): ImportCallFigures {
  const ms = median(rows.map((x) => x.r.ms));
  const baselineMs = median(rows.map((x) => x.baselineMs));
  const leastMs = median(rows.map((x) => x.leastMs));
  return {
    runs: rows.length,
    ms: round(ms),
    callMs: round(median(rows.map((x) => x.r.callMs))),
    eventMs: round(median(rows.map((x) => x.r.eventMs))),
    baselineMs: round(baselineMs, 2),
    leastMs: round(leastMs, 2),
    leastRatio: round(leastMs / baselineMs, 2),
    ratio: round(ms / baselineMs, 2),
    pairedRatio: round(median(rows.map((x) => x.r.ms / x.baselineMs)), 2),
    snapshots: Math.max(...rows.map((x) => x.r.snapshots)),
    snapshotsAfter: Math.max(...rows.map((x) => x.r.snapshotsAfter)),
    msRuns: rows.map((x) => round(x.r.ms)),
    baselineRunsMs: rows.map((x) => round(x.baselineMs, 2)),
  };
}

const reconnectFigures = (rows: { requests: number; totalRequests: number; preflights: number; ms: number }[]): ReconnectFigures => ({
  requests: median(rows.map((x) => x.requests)),
  totalRequests: median(rows.map((x) => x.totalRequests)),
  preflights: median(rows.map((x) => x.preflights)),
  ms: round(median(rows.map((x) => x.ms))),
});

/** Run the import section in one engine. */
export async function importBench(browser: BenchBrowser, plan: ImportPlan, log: (l: string) => void): Promise<ImportFigures> {
  const page = await browser.openPage();
  const dbs: string[] = [];
  const db = (label: string) => {
    const name = `opa-bench-import-${label}-${randomUUID().slice(0, 8)}`;
    dbs.push(name);
    return name;
  };
  try {
    await call(page, 'openBulkBaseline', db('baseline'));
    const calls = { importOpml: [] as ImportRun[], addMany: [] as ImportRun[] };
    const opa: ReconnectFigures[] = [];
    for (let run = 0; run < plan.runs; run++) {
      for (const kind of ['importOpml', 'addMany'] as const) {
        const label = `${kind}-${run}`;
        const server = await startServer({ port: 0, seed: plan.existing });
        try {
          const args: PullArgs = { baseUrl: server.url, token: 'demo-token', dbName: db(label), pageSize: 500 };
          await call(page, 'open', args);
          await call(page, 'sync');
          const urls = importFeeds(label, plan.feeds);
          const out = await offlineImport(browser, page, server, kind, urls, label, run % 2 === 1);
          const held = new Set(server.state().filter((e) => e.is_subscribed && !e.deleted).map((e) => e.feed_url));
          const missing = urls.filter((u) => !held.has(u)).length;
          if (missing) throw new Error(`bench: after the ${kind} run ${missing} of ${urls.length} feeds are not on the server`);
          const c = counted(out.log, (e) => e.method === 'POST' && e.path === '/v1/subscriptions');
          calls[kind].push(out);
          opa.push({ ...c, ms: out.drainMs });
          log(`  ${kind} ${plan.feeds} feeds (run ${run + 1}/${plan.runs}): visible in ${out.r.ms.toFixed(0)} ms (change event at ${out.r.eventMs.toFixed(0)} ms, call resolved at ${out.r.callMs.toFixed(0)} ms) vs bulkPut ${out.baselineMs.toFixed(1)} ms, the least import ${out.leastMs.toFixed(1)} ms; ${out.r.snapshots} snapshot(s) (+${out.r.snapshotsAfter} after); online: ${c.requests} POST, ${c.totalRequests} requests in all, drained in ${out.drainMs.toFixed(0)} ms`);
          await call(page, 'close');
        } finally {
          await server.close();
        }
      }
    }
    const gpodder: ReconnectFigures[] = [];
    for (let run = 0; run < plan.gpodderRuns; run++) {
      const label = `gpodder-${run}`;
      const server = await startGpodderServer({ port: 0, dialect: 'mygpo', users: { [USER]: PASSWORD } });
      try {
        const device = `${DEVICE}-${run}`;
        server.registerDevice(device);
        server.seed(plan.existing, { device });
        const args: PullArgs = { baseUrl: server.url, token: PASSWORD, dbName: db(label), pageSize: 500, gpodder: { username: USER, device } };
        await call(page, 'open', args);
        await call(page, 'sync');
        const urls = importFeeds(label, plan.feeds);
        const out = await offlineImport(browser, page, server, 'importOpml', urls, label, run % 2 === 1);
        const held = new Set(server.subscribed({ device }));
        const missing = urls.filter((u) => !held.has(u)).length;
        if (missing) throw new Error(`bench: after the gPodder import ${missing} of ${urls.length} feeds are not subscribed on the server`);
        const c = counted(out.log, (e) => e.method === 'POST' && e.path.startsWith('/api/2/subscriptions/'));
        gpodder.push({ ...c, ms: out.drainMs });
        log(`  gPodder importOpml ${plan.feeds} feeds (run ${run + 1}/${plan.gpodderRuns}): visible in ${out.r.ms.toFixed(0)} ms vs bulkPut ${out.baselineMs.toFixed(1)} ms; online: ${c.requests} upload(s), ${c.totalRequests} requests in all, drained in ${out.drainMs.toFixed(0)} ms`);
        await call(page, 'close');
      } finally {
        await server.close();
      }
    }
    await call(page, 'closeBulkBaseline');
    for (const name of dbs) await call(page, 'deleteDb', name, 30_000);
    return {
      feeds: plan.feeds,
      existing: plan.existing,
      importOpml: callFigures(calls.importOpml),
      addMany: callFigures(calls.addMany),
      reconnect: { opa: reconnectFigures(opa), gpodder: { ...reconnectFigures(gpodder), runs: gpodder.length } },
      method:
        'offline (the network cut in the browser), on an account of `existing` subscriptions synced first, client.store() mounted: the page call → the first snapshot with every row; baseline: the page posts as many feed URLs to a plain worker that bulkPuts them as rows (Dexie) and answers when committed, run beside it, and the least import (the same worker, one transaction: read the keys of the rows, write the rows and a queue entry each); then online: the requests the reference server saw until the queue was empty',
    };
  } finally {
    await page.close();
  }
}
