// The reactive store in the React app of test/frameworks (Chromium): one edit → the time until the app's DOM
// shows it, made in the same tab (from the update() call) and in another tab (from its update() resolving: the
// commit), and how many snapshots the store makes while a first sync of many rows renders.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import type {} from '../frameworks/shared.ts';
import { startServer } from '../server/server.ts';
import type { BrowserPage } from '../support/browsers.ts';
import type { RefServer } from '../server/types.ts';
import { serveStatic } from '../browser/support/static.ts';
import type { BenchBrowser } from './support/browser.ts';
import { percentile, round } from './support/stats.ts';

/** Edit → DOM times on one list size. */
export interface EditFigures {
  rows: number;
  edits: number;
  /** update() called in the app's tab, at rest → its DOM shows the row changed (ms). */
  sameTab: { p50Ms: number; p95Ms: number };
  /** update() resolved in another tab → this tab's DOM shows it (ms), with this tab's store at rest (its queue empty, no snapshot for a frame). */
  otherTab: { p50Ms: number; p95Ms: number };
  /** The same, 30 ms after an edit in this tab, while its push and that push's snapshot are under way. */
  otherTabBusy: { p50Ms: number; p95Ms: number };
}

/** The store's figures. */
export interface StoreFigures {
  /** On a list of a typical size (200 rows). */
  small: EditFigures;
  /** On the 10,000-row list the first sync left. */
  large: EditFigures;
  /** A first sync into an empty store, rendered by the app. */
  firstSync: { n: number; snapshots: number; renders: number; ms: number };
}

const config = fileURLToPath(new URL('../frameworks/vite.config.ts', import.meta.url));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await sleep(20);
  }
}

const rows = (page: BrowserPage) => page.evaluate(() => window.fw?.renders.at(-1)?.rows ?? -1);
const figure = (xs: number[]) => ({ p50Ms: round(percentile(xs, 50)), p95Ms: round(percentile(xs, 95)) });

/** Open the app for `server` in a tab that syncs it first, and another; resolves once both show `n` rows. */
async function open(browser: BenchBrowser, site: string, server: RefServer, n: number, pages: BrowserPage[]) {
  const options = { baseUrl: server.url, auth: { type: 'bearer', token: 'demo-token' }, dbName: `opa-bench-store-${n}-${Date.now()}`, pullInterval: 0, pushDelay: 20 };
  const url = `${site}/react/index.html?options=${encodeURIComponent(JSON.stringify(options))}`;
  const app = await browser.context.newPage();
  pages.push(app);
  await app.goto(url);
  await until(`${n} rows rendered`, async () => (await rows(app)) === n);
  await until('the first sync to end', () => app.evaluate(async () => (await window.fw.client.status()).phase === 'idle'));
  const first = await app.evaluate(() => ({ snapshots: window.fw.snapshots, renders: window.fw.renders.length, ms: window.fw.renders.at(-1)!.at - performance.timeOrigin }));
  const other = await browser.context.newPage();
  pages.push(other);
  await other.goto(url);
  await until("the other tab's rows", async () => (await rows(other)) === n);
  return { app, other, first };
}

/** Until the app's tab is at rest: its push done and no snapshot for more than a frame. */
async function atRest(app: BrowserPage): Promise<void> {
  // The queue as stored, not the snapshot's count (that one moves only when the push's status event comes), and
  // the sync idle again in the snapshot: its last status event has come.
  await until("this tab's push to end", () => app.evaluate(async () => (await window.fw.client.pending()).length === 0 && window.fw.store.getSnapshot().status.phase === 'idle'));
  await sleep(30);
}

/** Flip `guid` in the other tab: the time from its update() resolving until the app's DOM shows it. */
async function fromOtherTab(app: BrowserPage, other: BrowserPage, guid: string): Promise<number> {
  const on = await app.evaluate((g) => !window.fw.store.getSnapshot().subscriptions.find((s) => s.guid === g)!.isSubscribed, guid);
  await app.evaluate((e) => void ((window as unknown as { seen: Promise<number> }).seen = window.fw.shows(e.g, e.on)), { g: guid, on });
  const committed = await other.evaluate(
    async (e) => {
      await window.fw.client.update(e.g, { isSubscribed: e.on });
      return window.fw.now();
    },
    { g: guid, on },
  );
  return (await app.evaluate(() => (window as unknown as { seen: Promise<number> }).seen)) - committed;
}

/** `count` edits in the app's tab at rest, each followed by two from the other tab (one while the app's push is under way, one at rest), each timed until the app's DOM shows it. */
async function edits(app: BrowserPage, other: BrowserPage, n: number, count: number, log: (line: string) => void): Promise<EditFigures> {
  const guids = await app.evaluate((k) => window.fw.store.getSnapshot().subscriptions.slice(0, k).map((s) => s.guid), count);
  const same: number[] = [];
  const cross: number[] = [];
  const busy: number[] = [];
  for (const guid of guids) {
    await atRest(app);
    same.push(
      await app.evaluate(async (g) => {
        const { fw } = window;
        const on = !fw.store.getSnapshot().subscriptions.find((s) => s.guid === g)!.isSubscribed;
        const seen = fw.shows(g, on);
        const start = fw.now();
        await fw.client.update(g, { isSubscribed: on });
        return (await seen) - start;
      }, guid),
    );
    // While that edit's push, and the snapshots it makes, are under way.
    await sleep(30);
    busy.push(await fromOtherTab(app, other, guid));
    await atRest(app);
    cross.push(await fromOtherTab(app, other, guid));
  }
  const result = { rows: n, edits: count, sameTab: figure(same), otherTab: figure(cross), otherTabBusy: figure(busy) };
  log(
    `  ${n} rows, ${count} edits: same tab p50 ${result.sameTab.p50Ms} / p95 ${result.sameTab.p95Ms} ms; other tab, at rest p50 ${result.otherTab.p50Ms} / p95 ${result.otherTab.p95Ms} ms, busy p50 ${result.otherTabBusy.p50Ms} / p95 ${result.otherTabBusy.p95Ms} ms`,
  );
  return result;
}

/** Build the apps and measure in `browser`: edits on a 200-row list, then a first sync of 10,000 and edits on it. */
export async function storeBench(browser: BenchBrowser, mode: 'full' | 'quick', log: (line: string) => void): Promise<StoreFigures> {
  const large = mode === 'full' ? 10_000 : 1_000;
  const small = mode === 'full' ? 200 : 50;
  const count = mode === 'full' ? 50 : 5;
  const outDir = await mkdtemp(join(tmpdir(), 'opa-bench-frameworks-'));
  const servers: RefServer[] = [];
  let site: Awaited<ReturnType<typeof serveStatic>> | undefined;
  const pages: BrowserPage[] = [];
  try {
    await build({ configFile: config, logLevel: 'warn', build: { outDir, emptyOutDir: true } });
    site = await serveStatic(outDir);
    servers.push(await startServer({ port: 0, seed: small }), await startServer({ port: 0, seed: large }));
    const s = await open(browser, site.origin, servers[0]!, small, pages);
    const smallFigures = await edits(s.app, s.other, small, count, log);
    const l = await open(browser, site.origin, servers[1]!, large, pages);
    const firstSync = { n: large, snapshots: l.first.snapshots - 1, renders: l.first.renders, ms: round(l.first.ms) };
    log(`  first sync of ${large}: ${firstSync.snapshots} snapshots after the first, ${firstSync.renders} list sizes rendered, all rows shown ${firstSync.ms} ms after navigation`);
    const largeFigures = await edits(l.app, l.other, large, count, log);
    return { small: smallFigures, large: largeFigures, firstSync };
  } finally {
    for (const page of pages) await page.close().catch(() => undefined);
    await site?.close();
    for (const server of servers) await server.close();
    await rm(outDir, { recursive: true, force: true });
  }
}
