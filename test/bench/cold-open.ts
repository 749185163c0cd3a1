// Opening the player on a cached list (issue 27): a new tab's navigation start → 300 cached subscriptions in
// the DOM, the library's page (client + store, the module worker from the HTTP cache, the first `ready`
// snapshot rendered) against a raw page that opens the same database itself and renders one `getAll`.
// Runs alternate between the two, each a navigation of one tab beside the bench page, on the same database.
import { startServer } from '../server/server.ts';
import type { BrowserPage } from '../support/browsers.ts';
import type { BenchBrowser } from './support/browser.ts';
import { call } from './support/browser.ts';
import type { PullArgs } from './pages/api.ts';
import type { Opened } from './pages/rows.ts';
import { median, percentile, round } from './support/stats.ts';
import { waitFor } from '../support/wait.ts';

/** The cold-open figures (`coldOpen` in the JSON). */
export interface ColdOpenFigures {
  rows: number;
  runs: number;
  /** Medians, ms from navigation start: the library's rows in the DOM, its `ready` snapshot, the raw page's rows. */
  engineMs: number;
  engineReadyMs: number;
  rawMs: number;
  /** engineMs / rawMs; and the p95s of both. */
  ratio: number;
  engineP95Ms: number;
  rawP95Ms: number;
  engineRunsMs: number[];
  rawRunsMs: number[];
}

/** Navigate `tab` to `url` and resolve with what the page left on `window.opened`; then to a blank page (the page, its client and worker gone). */
async function openIn(tab: BrowserPage, url: string): Promise<Opened> {
  await tab.goto(url);
  const opened = await waitFor(url, () => tab.evaluate(() => window.opened ?? null), 30_000).catch(async (e) => {
    // Where the page got to: the raw page notes each step of its open and read.
    const where = await tab.evaluate(() => JSON.stringify((window as unknown as { openStage?: string[] }).openStage ?? null)).catch(() => 'unknown');
    throw new Error(`${String(e)}; the page's steps: ${where}`);
  });
  await tab.goto('about:blank');
  return opened;
}

/** Fill a database with `rows` subscriptions through the library, then time `runs` cold opens of each page. */
export async function coldOpenBench(browser: BenchBrowser, rows: number, runs: number, args: (server: { url: string }) => PullArgs, log: (l: string) => void): Promise<ColdOpenFigures> {
  const server = await startServer({ port: 0, seed: rows });
  const page = await browser.openPage();
  const a = args(server);
  let tab: BrowserPage | undefined;
  try {
    await call(page, 'open', a);
    await call(page, 'sync');
    await call(page, 'close');
    const options = { baseUrl: a.baseUrl, auth: { type: 'bearer', token: a.token }, dbName: a.dbName, pageSize: a.pageSize, pullInterval: 0 };
    const engineUrl = `${browser.site}open.html?options=${encodeURIComponent(JSON.stringify(options))}`;
    const rawUrl = `${browser.site}raw-open.html?db=${encodeURIComponent(a.dbName)}`;
    // One tab for every open, each a navigation of its own (a tab opened after one closed loses WebDriver's
    // current window in WebKit). The first of each fills the HTTP cache (the pages' scripts, the worker file)
    // and warms the database: not measured.
    tab = await browser.context.newPage();
    await openIn(tab, engineUrl);
    await openIn(tab, rawUrl);
    const engine: Opened[] = [];
    const raw: Opened[] = [];
    for (let i = 0; i < runs; i++) {
      for (const kind of i % 2 === 0 ? (['engine', 'raw'] as const) : (['raw', 'engine'] as const)) {
        const opened = await openIn(tab, kind === 'engine' ? engineUrl : rawUrl);
        if (opened.rows !== rows) throw new Error(`bench: the ${kind} cold open showed ${opened.rows} of ${rows} rows`);
        (kind === 'engine' ? engine : raw).push(opened);
        log(`  coldOpen run ${i + 1}/${runs} ${kind.padEnd(6)} ${opened.ms.toFixed(0)} ms${opened.readyMs === undefined ? '' : ` (ready snapshot at ${opened.readyMs.toFixed(0)} ms)`}`);
      }
    }
    const ms = (xs: Opened[]) => xs.map((o) => o.ms);
    const engineMs = median(ms(engine));
    const rawMs = median(ms(raw));
    return {
      rows,
      runs,
      engineMs: round(engineMs),
      engineReadyMs: round(median(engine.map((o) => o.readyMs!))),
      rawMs: round(rawMs),
      ratio: round(engineMs / rawMs, 2),
      engineP95Ms: round(percentile(ms(engine), 95)),
      rawP95Ms: round(percentile(ms(raw), 95)),
      engineRunsMs: ms(engine).map((x) => round(x)),
      rawRunsMs: ms(raw).map((x) => round(x)),
    };
  } finally {
    await tab?.close();
    await call(page, 'deleteDb', a.dbName, 30_000).catch(() => false);
    await page.close();
    await server.close();
  }
}
