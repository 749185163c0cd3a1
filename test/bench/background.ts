// `npm run bench -- --background [--runs=N] [--down=S] [--long] [--quick]`: changes sent by the app's service
// worker (opa-sync/sw) after every page is closed, in Chromium, with the built app of the offline-boot test
// (test/browser/pages/offline-boot/) and the reference server:
// - offline: a change made offline, every page closed, then the network back (DevTools' offline emulation of
//   the service worker, which holds Chromium's sync event until it ends): latency from the network's return
//   to the change on the server, p50/p95 and the share within 1 s, over `--runs` changes (default 20);
// - server down: the network up, the server dropping every connection for `--down` seconds (default 120)
//   from the change on, every page closed: latency from the server's return to the change on it (target ≤ 5 s);
// - closed mid-push: the network up, the server answering nothing (each request held 10 s, then cut) for
//   `--down` seconds from the change on, the page closed within 300 ms of the change while its push is in flight
//   (not after a failed push): whether a tag was registered before the close, and the latency from the server's
//   return to the change on it (target ≤ 5 s; issue 34);
// - `--long`: the same with the server down 10 minutes (Chromium's own retry at +5/+15 min; > 10 min).
// `--quick`: 2 offline runs and 5 s down (a smoke run, well under a minute).
import type { CDPSession } from 'playwright-core';
import { startServer } from '../server/server.ts';
import type { RefServer } from '../server/types.ts';
import { launchBrowser } from '../support/browsers.ts';
import { playwrightPage } from '../support/drivers/chromium.ts';
import type { BrowserContext } from '../support/driver.ts';
import { sleep, waitFor } from '../support/wait.ts';
import { clientOptions } from '../browser/support/harness.ts';
import { openInstalled, startOfflineApp, type OfflineApp } from '../browser/support/offline-app.ts';
import { percentile } from './support/stats.ts';

/** The service worker's network, as DevTools' offline switch for it sets it (CDP, on the worker's own target). */
interface SwNetwork {
  setOffline(offline: boolean): Promise<void>;
}

/** Attach to the app's service worker target and drive its network emulation. */
async function swNetwork(browserSession: CDPSession, scriptUrl: string): Promise<SwNetwork> {
  const { targetInfos } = await browserSession.send('Target.getTargets');
  const target = targetInfos.find((t) => t.type === 'service_worker' && t.url.startsWith(scriptUrl));
  if (!target) throw new Error(`no service worker target for ${scriptUrl}`);
  // Not flattened: Playwright's session sends to the browser only, so messages to the worker travel inside it.
  const { sessionId } = await browserSession.send('Target.attachToTarget', { targetId: target.targetId, flatten: false });
  let next = 0;
  const waiting = new Map<number, (error?: string) => void>();
  browserSession.on('Target.receivedMessageFromTarget', (event) => {
    if (event.sessionId !== sessionId) return;
    const message = JSON.parse(event.message) as { id?: number; error?: { message: string } };
    if (message.id !== undefined) waiting.get(message.id)?.(message.error?.message);
  });
  const send = (method: string, params: object) =>
    new Promise<void>((resolve, reject) => {
      const id = ++next;
      waiting.set(id, (error) => (waiting.delete(id), error ? reject(new Error(`${method}: ${error}`)) : resolve()));
      void browserSession.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method, params }) });
    });
  await send('Network.enable', {});
  return { setOffline: (offline) => send('Network.emulateNetworkConditions', { offline, latency: 0, downloadThroughput: -1, uploadThroughput: -1 }) };
}

/** The figures of one run of the bench. */
export interface BackgroundFigures {
  offline: { runs: number; delivered: number; within1s: number; p50?: number; p95?: number };
  down: { seconds: number; latencyMs?: number; copies: number };
  midPush: { seconds: number; closedAfterMs: number; tagged: boolean; latencyMs?: number; copies: number; requests: string[] };
  long?: { seconds: number; latencyMs?: number; copies: number };
}

const arrival = (server: RefServer, feed: string) => server.log().find((e) => e.method === 'POST' && e.fault === undefined && e.status >= 200 && e.status < 300 && JSON.stringify(e.body).includes(feed));
const copies = (server: RefServer, feed: string) => server.state().filter((e) => e.feed_url === feed).length;

/** Open a page of the app with `backgroundSync: true` on `dbName`, add `feed`, wait until it is queued and the tag registered, close it. */
async function queuedAndClosed(context: BrowserContext, app: OfflineApp, server: RefServer, feed: string, dbName: string): Promise<void> {
  const page = await openInstalled(context, app, clientOptions(server, dbName, { backgroundSync: true }));
  await waitFor('the app', () => page.evaluate(() => document.getElementById('state')?.textContent === 'ready'), 30_000);
  await page.evaluate((f) => (window as unknown as { app: { client: { add(f: string): Promise<unknown> } } }).app.client.add(f), feed);
  await waitFor('the change queued and the tag registered', async () => {
    const s = await page.evaluate(() => (window as unknown as { app: { client: { status(): Promise<{ pending: number; backgroundSync?: string }> } } }).app.client.status());
    return s.pending === 1 && s.backgroundSync === 'registered';
  }, 30_000);
  await page.close();
}

/** The server down `seconds` from the change on (the network up), every page closed: the latency after its return. */
async function serverDown(context: BrowserContext, app: OfflineApp, server: RefServer, seconds: number, dbName: string): Promise<{ seconds: number; latencyMs?: number; copies: number }> {
  const feed = `https://feeds.example/bench/background-down-${seconds}-${Date.now()}.xml`;
  server.dropNext(1_000_000);
  const downAt = Date.now();
  await queuedAndClosed(context, app, server, feed, dbName);
  await sleep(Math.max(0, downAt + seconds * 1000 - Date.now()));
  server.clearFaults();
  const back = Date.now();
  // Chromium's retries come at +5 and +15 min after a failed event: wait out the last one.
  const found = await waitFor('the change on the server', () => arrival(server, feed), seconds > 150 ? 20 * 60_000 : 60_000, 10).catch(() => undefined);
  await sleep(500);
  return { seconds, latencyMs: found ? found.at - back : undefined, copies: copies(server, feed) };
}

/**
 * A dead server behind its proxy: each request held this long, then its connection cut (the proxy's upstream
 * timeout). Held for ever, the hung connections would fill the browser's six per host and nothing would go after
 * the return (measured: every request queued in the browser after the sixth).
 */
const SILENT_MS = 10_000;

/**
 * The server silent `seconds` from the change on (the network up): the page changes something and closes within
 * 300 ms, its push still in flight; then the latency from the server's return to the change on it.
 */
async function closedMidPush(context: BrowserContext, app: OfflineApp, server: RefServer, seconds: number, dbName: string): Promise<BackgroundFigures['midPush']> {
  const feed = `https://feeds.example/bench/background-mid-push-${seconds}-${Date.now()}.xml`;
  const page = await openInstalled(context, app, clientOptions(server, dbName, { backgroundSync: true }));
  await waitFor('the app', () => page.evaluate(() => document.getElementById('state')?.textContent === 'ready'), 30_000);
  server.setLatency(SILENT_MS);
  server.dropNext(1_000_000);
  const changedAt = Date.now();
  await page.evaluate((f) => (window as unknown as { app: { client: { add(f: string): Promise<unknown> } } }).app.client.add(f), feed);
  await sleep(Math.max(0, changedAt + 200 - Date.now()));
  const tagged = await page.evaluate(async () => {
    const registration = (await navigator.serviceWorker.ready) as unknown as { sync?: { getTags(): Promise<string[]> } };
    return ((await registration.sync?.getTags()) ?? []).includes('opa-sync');
  });
  await page.close();
  const closedAfterMs = Date.now() - changedAt;
  await sleep(Math.max(0, changedAt + seconds * 1000 - Date.now()));
  // New requests are answered at once (one still held then is answered when its hold ends: the service worker's).
  server.setLatency(0);
  server.clearFaults();
  const back = Date.now();
  const found = await waitFor('the change on the server', () => arrival(server, feed), 60_000, 10).catch(() => undefined);
  await sleep(500);
  const requests = server.log().filter((e) => e.at >= changedAt).map((e) => `${e.method} ${((e.at - changedAt) / 1000).toFixed(1)}s ${e.status}`);
  return { seconds, closedAfterMs, tagged, latencyMs: found ? found.at - back : undefined, copies: copies(server, feed), requests };
}

/** Measure; `log` gets progress lines. */
export async function measureBackground(opts: { runs: number; down: number; long: boolean }, log: (line: string) => void = () => undefined): Promise<BackgroundFigures> {
  const app = await startOfflineApp();
  const server = await startServer({ port: 0, seed: 3 });
  const browser = await launchBrowser('chromium');
  try {
    const context = await browser.newContext();
    // Every page of the app closed: this blank tab keeps the context (and the browser's CDP session) alive.
    const blank = await context.newPage();
    // One store, as an app has: each sync event pushes every store a page asked `backgroundSync` for, an
    // engine each (measured with a new store per run: ~45 ms more per store, 1 s at the 20th).
    const dbName = `bench-background-${Date.now()}`;
    const setup = await openInstalled(context, app, clientOptions(server, dbName));
    await setup.close();
    const session = await playwrightPage(blank)!.context().browser()!.newBrowserCDPSession();
    const sw = await swNetwork(session, `${app.url}sw.js`);

    const latencies: number[] = [];
    for (let i = 0; i < opts.runs; i++) {
      const feed = `https://feeds.example/bench/background-offline-${i}-${Date.now()}.xml`;
      await sw.setOffline(true);
      await context.setOffline(true);
      server.dropNext(1_000_000);
      await queuedAndClosed(context, app, server, feed, dbName);
      await context.setOffline(false);
      server.clearFaults();
      const back = Date.now();
      await sw.setOffline(false);
      const found = await waitFor('the change on the server', () => arrival(server, feed), 30_000, 5).catch(() => undefined);
      if (found) latencies.push(found.at - back);
      log(`offline run ${i + 1}/${opts.runs}: ${found ? `${found.at - back} ms` : 'not delivered in 30 s'}`);
    }
    const offline: BackgroundFigures['offline'] = { runs: opts.runs, delivered: latencies.length, within1s: latencies.filter((ms) => ms <= 1000).length };
    if (latencies.length) Object.assign(offline, { p50: percentile(latencies, 50), p95: percentile(latencies, 95) });

    log(`server down ${opts.down} s…`);
    const down = await serverDown(context, app, server, opts.down, dbName);
    log(`server silent ${opts.down} s, the page closed mid-push…`);
    const midPush = await closedMidPush(context, app, server, opts.down, dbName);
    log(`requests from the change on (method, when, status): ${midPush.requests.join(', ')}`);
    const figures: BackgroundFigures = { offline, down, midPush };
    if (opts.long) {
      log('server down 600 s (Chromium retries at +5 and +15 min)…');
      figures.long = await serverDown(context, app, server, 600, dbName);
    }
    await context.close();
    return figures;
  } finally {
    await browser.close();
    await server.close();
    await app.close();
  }
}

/** `npm run bench -- --background`: prints the figures, exits. */
export async function runBackgroundBench(argv: string[]): Promise<void> {
  const opts = { runs: 20, down: 120, long: false };
  for (const arg of argv) {
    const [name, value] = arg.split('=', 2) as [string, string | undefined];
    if (name === '--runs' && value) opts.runs = Number(value);
    else if (name === '--down' && value) opts.down = Number(value);
    else if (name === '--long') opts.long = true;
    else if (name === '--quick') Object.assign(opts, { runs: 2, down: 5 });
  }
  const f = await measureBackground(opts, (line) => console.error(line));
  const ms = (v: number | undefined) => (v === undefined ? 'not delivered' : `${v} ms`);
  console.log('| Chromium, every page closed, the app\'s service worker (opa-sync/sw) | figure | target |');
  console.log('|---|---|---|');
  console.log(`| offline, then the network back: network → on the server, p50 / p95 | ${ms(f.offline.p50)} / ${ms(f.offline.p95)} | |`);
  console.log(`| the same: delivered within 1 s | ${f.offline.within1s}/${f.offline.runs} (${f.offline.delivered} delivered in 30 s) | ${f.offline.runs}/${f.offline.runs} |`);
  console.log(`| the server down ${f.down.seconds} s (network up): its return → on the server | ${ms(f.down.latencyMs)}, ${f.down.copies} cop${f.down.copies === 1 ? 'y' : 'ies'} | ≤ 5 s, 1 copy |`);
  const m = f.midPush;
  console.log(`| the server silent ${m.seconds} s (network up), the page closed ${m.closedAfterMs} ms after the change, push in flight: tag before the close; its return → on the server | ${m.tagged ? 'tagged' : 'no tag'}; ${ms(m.latencyMs)}, ${m.copies} cop${m.copies === 1 ? 'y' : 'ies'} | tagged; ≤ 5 s, 1 copy |`);
  if (f.long) console.log(`| the server down ${f.long.seconds} s: its return → on the server (Chromium's retry) | ${ms(f.long.latencyMs)}, ${f.long.copies} cop${f.long.copies === 1 ? 'y' : 'ies'} | at Chromium's next attempt, 1 copy |`);
  process.exit(0);
}
