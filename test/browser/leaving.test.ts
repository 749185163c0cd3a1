// Leaving the page loses nothing: after a throttled setProgress (waiting out the 30 s progressInterval) and a
// subscription added just before, closing the tab, navigating away and reloading put both on the server, in
// every engine, against the reference gPodder server and the real opodsync, each behind the page's own origin
// (Vite's proxy). The worker dies with the page: only the page's own keepalive requests (the last-chance copy)
// can carry them. The page the tab leads to starts no client (`inert.html`), so no next open delivers them.
import { expect, it } from 'vitest';
import { launchBrowser } from '../support/browsers.ts';
import { playwrightPage } from '../support/drivers/chromium.ts';
import { startOpodsync } from '../support/opodsync.ts';
import { describeOpodsync } from '../support/opodsync-suite.ts';
import { startGpodderServer, type GpodderServer } from '../server/gpodder/server.ts';
import { forEachEngine, openPage, perBlock, startPages, uniqueDbName, waitFor, sleep, type Browser, type BrowserPage, type EngineName, type PageOptions } from './support/harness.ts';

/** Runs of each way of leaving, per engine, against the reference server (opodsync: a quarter, it is slower). */
const RUNS = Number(process.env.LEAVING_RUNS ?? 20);
const OPODSYNC_RUNS = Number(process.env.LEAVING_RUNS ?? 5);
/** The issue's bound: the last position on the server this soon after the page went. */
const DELIVERED_WITHIN = 3000;
const USER = 'alice';
const PASSWORD = 'alice-password';
const DEVICE = 'web-player';

const feed = (n: number | string) => `https://feeds.example/leaving/show-${n}.xml`;
const episode = (n: number | string) => `https://media.example/leaving/ep-${n}.mp3`;

/** What a test reads of the server it runs against. */
interface Target {
  /** The newest position the server holds for an episode, if any. */
  position(url: string): Promise<number | undefined>;
  subscribed(url: string): Promise<boolean>;
}

type Leave = 'close' | 'navigate' | 'reload';

/** Whether a run's position and feed are on the server. */
const arrived = (target: Target, run: { episode: string; position: number; feed: string }) => async () => (await target.position(run.episode)) === run.position && (await target.subscribed(run.feed));

/**
 * Where the page's send at the close is not always delivered (measured: docs/browser-support.md), and the
 * test asserts what the engine guarantees instead: the next open delivers it. Firefox closing a tab: its
 * keepalive requests from a tab being closed went out in 13 to 20 of 20 closes in the bench and here. Not the harness:
 * the page's own `window.close()` loses as often as BiDi's close (test/bench/leaving-firefox-probe.ts).
 * WebKit navigating: it aborts the worker's own upload of the feed as the page navigates, before `pagehide`; the
 * engine cannot tell that from an answer lost after the server took it, so the add waits for the server's word
 * (a pull) before it goes again, in the push and in the page's copy alike (issue 31): when the copy is rebuilt
 * before the page goes, the next open delivers the feed (1 of 20 runs on the reference server, 1 of 5 on opodsync).
 */
function nextOpenOnly(engine: EngineName, how: Leave): boolean {
  return (engine === 'firefox' && how === 'close') || (engine === 'webkit' && how === 'navigate');
}

/** Leave the page one way; the page it leads to starts no client. */
async function leave(page: BrowserPage, how: Leave, pagesUrl: string): Promise<void> {
  if (how === 'close') return page.close();
  if (how === 'navigate') return page.goto(`${pagesUrl}inert.html`);
  // A real reload of the document (its pagehide, its unload), of an address that starts no client.
  await page.evaluate(() => history.replaceState(null, '', 'inert.html'));
  await page.reload();
}

/** The page's side of one run: a position the worker has pushed, a newer one it holds back, a feed added just before the page goes. */
async function prepare(page: BrowserPage, run: { episode: string; position: number; feed: string; podcast: string }): Promise<void> {
  await page.evaluate(async (r) => {
    const client = window.opa.client;
    await client.sync();
    const ref = { podcast: r.podcast, episode: r.episode, guid: r.episode };
    await client.setProgress(ref, { position: 5, total: 1800 });
    await client.sync();
    // Throttled: the next upload of this episode waits out the progressInterval.
    await client.setProgress(ref, { position: r.position });
    await client.add(r.feed);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }, run);
}

/** `RUNS` of each way of leaving: each delivered within 3 s (or, where the engine only guarantees that, at the next open). */
function leavingTests(env: () => { browser: Browser; pagesUrl: string; target: Target; options: (dbName: string) => PageOptions; podcast: string }, label: string, RUNS: number): void {
  for (const how of ['close', 'navigate', 'reload'] as const) {
    it(`${how}: ${RUNS} of ${RUNS} put the last position and a feed added 20 ms before on the server (${label})`, async () => {
      const { browser, pagesUrl, target, options, podcast } = env();
      const context = await browser.newContext();
      // Closing a context's last tab ends WebKit's session: a blank tab keeps it.
      await context.newPage();
      const delivered: number[] = [];
      let atNextOpen = 0;
      try {
        for (let i = 0; i < RUNS; i++) {
          const id = `${browser.engine}-${how}-${i}-${Date.now()}`;
          const run = { episode: episode(id), position: 100 + i, feed: feed(id), podcast };
          const dbName = uniqueDbName(`leaving-${id}`);
          const page = await openPage(context, pagesUrl, options(dbName));
          await prepare(page, run);
          const left = Date.now();
          await leave(page, how, pagesUrl);
          const onTime = await waitFor(`run ${i}: position ${run.position} and the added feed on the server`, arrived(target, run), DELIVERED_WITHIN, 25).catch((error: unknown) => {
            if (!nextOpenOnly(browser.engine, how)) throw error;
            return false;
          });
          if (onTime) delivered.push(Date.now() - left);
          else {
            // What this engine guarantees for this way of leaving: the next open sends it in its first run.
            const next = await openPage(context, pagesUrl, options(dbName));
            await next.evaluate(() => window.opa.client.sync());
            expect(await arrived(target, run)()).toBe(true);
            atNextOpen++;
            await next.close();
          }
          if (how !== 'close') await page.close();
        }
      } finally {
        console.log(`leaving ${label} ${browser.engine} ${how}: ${delivered.length}/${RUNS} delivered, ${atNextOpen} at the next open; close → on server ms: ${delivered.join(' ')}`);
        await context.close();
      }
      expect(delivered.length + atNextOpen).toBe(RUNS);
    });
  }
}

const basic = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;

function pageOptions(origin: string, dbName: string): PageOptions {
  return { protocol: 'gpodder', baseUrl: origin, auth: { type: 'basic', username: USER, password: PASSWORD }, device: DEVICE, dbName, pullInterval: 0, pushDelay: 50 };
}

forEachEngine((engine: EngineName) => {
  const env = perBlock(
    async () => {
      const server = await startGpodderServer({ port: 0, dialect: 'mygpo' });
      const pages = await startPages({ '/api/2': server.url });
      const browser = await launchBrowser(engine);
      server.registerDevice(DEVICE);
      server.foreign.add([feed('listened')], { device: DEVICE });
      return { server, pages, browser };
    },
    async ({ server, pages, browser }) => {
      await browser.close();
      await pages.close();
      await server.close();
    },
  );
  const refTarget = (server: GpodderServer): Target => ({
    // mygpo keeps no guid: found by URL.
    position: async (url) => server.episodeLog().filter((a) => a.episode === url).at(-1)?.position ?? undefined,
    subscribed: async (url) => server.subscribed({ device: DEVICE }).includes(url),
  });

  leavingTests(() => {
    const { server, pages, browser } = env();
    const origin = new URL(pages.url).origin;
    return { browser, pagesUrl: pages.url, target: refTarget(server), options: (db) => pageOptions(origin, db), podcast: feed('listened') };
  }, 'reference gPodder server', RUNS);

  if (engine === 'chromium') {
    it('a tab that ends without pagehide (its renderer crashed) still delivers: the deferred fetchLater kept current', async () => {
      const { server, pages, browser } = env();
      const origin = new URL(pages.url).origin;
      const target = refTarget(server);
      const context = await browser.newContext();
      await context.newPage();
      const run = { episode: episode(`crash-${Date.now()}`), position: 66, feed: feed(`crash-${Date.now()}`), podcast: feed('listened') };
      const page = await openPage(context, pages.url, pageOptions(origin, uniqueDbName('leaving-crash')));
      expect(await page.evaluate(() => typeof (window as unknown as { fetchLater?: unknown }).fetchLater)).toBe('function');
      await prepare(page, run);
      const native = playwrightPage(page)!;
      const cdp = await native.context().newCDPSession(native);
      void cdp.send('Page.crash').catch(() => undefined);
      await waitFor('the crashed tab\'s deferred requests on the server', arrived(target, run), DELIVERED_WITHIN, 25);
      await context.close();
    });
  }

  it('offline at the close: nothing is sent, nothing is lost, the next open delivers it; a delivered close is not undone by the next open', async () => {
    const { server, pages, browser } = env();
    const origin = new URL(pages.url).origin;
    const target = refTarget(server);
    const context = await browser.newContext();
    await context.newPage();
    const dbName = uniqueDbName('leaving-offline');
    const run = { episode: episode(`offline-${engine}`), position: 77, feed: feed(`offline-${engine}`), podcast: feed('listened') };
    const page = await openPage(context, pages.url, pageOptions(origin, dbName));
    await page.evaluate(async (r) => {
      await window.opa.client.sync();
      await window.opa.client.setProgress({ podcast: r.podcast, episode: r.episode, guid: r.episode }, { position: 5, total: 1800 });
      await window.opa.client.sync();
    }, run);
    // Offline: the engine's own switch, and the server cutting every connection (so what went out anyway shows in its log).
    server.clearLog();
    server.dropNext(1_000_000);
    await context.setOffline(true);
    await page.evaluate(async (r) => {
      await window.opa.client.setProgress({ podcast: r.podcast, episode: r.episode, guid: r.episode }, { position: r.position });
      await window.opa.client.add(r.feed);
    }, run);
    await page.close();
    await sleep(1000);
    const tried = server.log().filter((e) => e.method === 'POST');
    expect(tried.map((e) => `${e.method} ${e.path} ${e.headers['origin'] ?? ''} ${e.headers['sec-fetch-mode'] ?? ''} ${JSON.stringify(e.body)}`)).toEqual([]);
    expect(await target.position(run.episode)).toBe(5);
    server.clearFaults();
    await context.setOffline(false);
    // The next open sends what waited in its first run.
    const next = await openPage(context, pages.url, pageOptions(origin, dbName));
    await next.evaluate(() => window.opa.client.sync());
    expect(await target.position(run.episode)).toBe(77);
    expect(await target.subscribed(run.feed)).toBe(true);
    // A close that delivered, then the next open: the server keeps the position.
    await next.evaluate((r) => window.opa.client.setProgress({ podcast: r.podcast, episode: r.episode, guid: r.episode }, { position: 88 }), run);
    await next.close();
    // Firefox's tab close may lose its keepalive request (nextOpenOnly): then the next open below sends 88.
    await waitFor('the close to deliver 88', async () => (await target.position(run.episode)) === 88, DELIVERED_WITHIN, 25).catch((error: unknown) => {
      if (!nextOpenOnly(engine, 'close')) throw error;
    });
    const again = await openPage(context, pages.url, pageOptions(origin, dbName));
    const state = await again.evaluate(async (r) => {
      await window.opa.client.sync();
      return window.opa.client.episode({ podcast: r.podcast, episode: r.episode, guid: r.episode });
    }, run);
    expect(state).toMatchObject({ position: 88, pending: false });
    expect(await target.position(run.episode)).toBe(88);
    await context.close();
  });
});

describeOpodsync('leaving the page, against the real opodsync behind a same-origin proxy', () => {
  forEachEngine((engine: EngineName) => {
    const env = perBlock(
      async () => {
        const server = await startOpodsync({ username: USER, password: PASSWORD });
        const pages = await startPages({ '/api/2': server.baseUrl, '/index.php': server.baseUrl });
        const browser = await launchBrowser(engine);
        const response = await fetch(`${server.baseUrl}/api/2/subscriptions/${USER}/phone.json`, {
          method: 'POST',
          headers: { Authorization: basic, 'Content-Type': 'application/json' },
          body: JSON.stringify({ add: [feed('listened')], remove: [] }),
        });
        if (response.status !== 200) throw new Error(`opodsync refused the seed: ${response.status}`);
        return { server, pages, browser };
      },
      async ({ server, pages, browser }) => {
        await browser.close();
        await pages.close();
        await server.stop();
      },
    );
    const get = async <T>(path: string): Promise<T> => (await (await fetch(`${env().server.baseUrl}${path}`, { headers: { Authorization: basic } })).json()) as T;
    const target: Target = {
      async position(url) {
        const { actions } = await get<{ actions: { episode: string; position?: number; timestamp: string }[] }>(`/api/2/episodes/${USER}.json?since=0`);
        return actions.filter((a) => a.episode === url).at(-1)?.position;
      },
      subscribed: async (url) => (await get<{ add: string[] }>(`/api/2/subscriptions/${USER}/phone.json?since=0`)).add.includes(url),
    };
    leavingTests(() => {
      const { pages, browser } = env();
      const origin = new URL(pages.url).origin;
      return { browser, pagesUrl: pages.url, target, options: (db) => pageOptions(origin, db), podcast: feed('listened') };
    }, 'opodsync', OPODSYNC_RUNS);
  });
});
