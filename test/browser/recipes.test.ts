// The guides' recipes, run as written and served the way apps are served, by `vite preview` and by `vite` (dev):
// - docs/service-worker.md, "Booting offline": its service worker, verbatim, boots the built app offline. Under
//   `vite preview` every answer carries `Vary: Origin` and module scripts are fetched with an `Origin`, so the
//   same worker without `ignoreVary: true` misses its own cache (the control below). Its `serveBackgroundSync`
//   sends what a closed page left, with every page closed (Chromium's sync event, fired over CDP).
// - docs/servers.md, "The same-origin proxy opodsync needs": its vite.config.ts, verbatim, puts a gPodder server that sends no
//   CORS headers under the app's origin, over both path families (gPodder v2 and Nextcloud), for the built app
//   under `vite preview` and for the same app under the dev server (its dependency optimizer pre-bundling opa-sync).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startServer } from '../server/server.ts';
import { startGpodderServer } from '../server/gpodder/server.ts';
import type { GpodderServer } from '../server/gpodder/types.ts';
import type { RefServer } from '../server/types.ts';
import { launchBrowser, selectedEngines, type Browser, type BrowserContext, type BrowserPage } from '../support/browsers.ts';
import { clientOptions, forEachEngine, goOffline, perBlock, served, sleep, uniqueDbName, waitFor } from './support/harness.ts';
import { controlServiceWorker } from './support/service-worker.ts';
import type { PageOptions } from './support/page-api.ts';
import { guideProxyConfig, guideServiceWorker, startDevApp, startPreviewApp, type PreviewApp } from './support/recipes-app.ts';
import type { SyncClient } from '../../src/index.ts';

const SEED = 5;
const FEED = 'https://feeds.example/recipes/added.xml';

declare global {
  interface Window {
    app?: { client: SyncClient };
  }
}

/** The feed URLs the app's list shows. */
const shown = (page: BrowserPage) => page.evaluate(() => [...document.querySelectorAll('#list li')].map((li) => li.textContent ?? ''));

/** Open the app with `options`, register its service worker as the guide says, and wait until it controls the page. */
async function openApp(context: BrowserContext, app: PreviewApp, options: PageOptions): Promise<BrowserPage> {
  const page = await context.newPage();
  await page.goto(`${app.url}index.html?options=${encodeURIComponent(JSON.stringify(options))}`);
  await page.evaluate(async () => {
    await navigator.serviceWorker.register('/sw.js', { type: 'module', scope: '/' });
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) await new Promise((resolve) => navigator.serviceWorker.addEventListener('controllerchange', resolve, { once: true }));
  });
  return page;
}

describe.runIf(selectedEngines().includes('chromium'))('chromium: booting offline, as docs/service-worker.md shows it', () => {
  let browser: Browser;
  let server: RefServer;

  beforeAll(async () => {
    server = await startServer({ port: 0, seed: SEED });
    browser = await launchBrowser('chromium');
  });
  beforeEach(() => server.reset());
  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await server?.close().catch(() => undefined);
  });

  it('vite preview answers a module script fetched with an Origin with `Vary: Origin` (why the guide needs ignoreVary)', async () => {
    const app = await startPreviewApp();
    try {
      const script = app.files.find((f) => /^\/assets\/index-.*\.js$/.test(f));
      expect(script).toBeDefined();
      const answer = await fetch(new URL(script!, app.url), { headers: { Origin: new URL(app.url).origin } });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('vary') ?? '').toMatch(/origin/i);
      // The library's worker, renamed by the app's build (hashed again), is on the list the guide's script made.
      expect(app.files.filter((f) => /^\/assets\/opa-sync-worker-.*\.js$/.test(f))).toHaveLength(1);
      expect(app.files).toContain('/index.html');
    } finally {
      await app.close();
    }
  });

  it("the guide's service worker: an offline reload boots, shows the cached list, and an edit made then (its Background Sync registered) reaches the server once", async () => {
    const app = await startPreviewApp();
    try {
      const context = await browser.newContext();
      const page = await openApp(context, app, clientOptions(server, uniqueDbName('recipes-boot'), { backgroundSync: true }));
      await waitFor('the pulled list', async () => (await shown(page)).length === SEED, 30_000);
      const list = await shown(page);
      await goOffline(context, server);
      await app.stop();
      await page.reload();
      await waitFor('the cached list after the offline reload', async () => (await shown(page)).join() === list.join(), 30_000);
      await page.evaluate((feed) => window.app!.client.add(feed), FEED);
      expect(await page.evaluate(() => window.app!.client.status())).toMatchObject({ pending: 1, online: false });
      // The guide's service worker also serves Background Sync: the page registered its tag for what waits.
      await waitFor('the Background Sync tag registered', async () => (await page.evaluate(() => window.app!.client.status())).backgroundSync === 'registered', 30_000);

      server.clearFaults();
      await context.setOffline(false);
      await waitFor('the change on the server', () => server.state().some((e) => e.feed_url === FEED), 30_000);
      expect(server.state().filter((e) => e.feed_url === FEED)).toHaveLength(1);
      await context.close();
    } finally {
      await app.close();
    }
  });

  it("the guide's service worker sends what a closed page left: an edit queued while the API is unreachable, every page closed, the API back, the sync event: on the server once, sent by the service worker", async () => {
    const app = await startPreviewApp();
    try {
      const context = await browser.newContext();
      const page = await openApp(context, app, clientOptions(server, uniqueDbName('recipes-background'), { backgroundSync: true }));
      await waitFor('the pulled list', async () => (await shown(page)).length === SEED, 30_000);
      // Measured (background-sync.test.ts): faulting the network right after activation sometimes closed the page.
      await sleep(300);
      // Unreachable to the service worker too (the browser's offline switch does not reach its fetches).
      server.dropNext(1_000_000);
      await page.evaluate((feed) => window.app!.client.add(feed), FEED);
      // Closed once its push failed: the add may have arrived, so the page's last copy holds it back and only the
      // service worker can send it (closed earlier, a keepalive copy could deliver it: demo-background.test.ts).
      await waitFor('the push failed, the tag registered', async () => {
        const status = await page.evaluate(() => window.app!.client.status());
        return status.pending === 1 && status.backgroundSync === 'registered' && status.lastError?.code === 'network';
      }, 15_000);
      const sw = await controlServiceWorker(context, app.url);
      await page.close();
      expect(sw.pages()).toEqual(['about:blank']);

      server.clearFaults();
      server.clearLog();
      await sw.fireSync();
      await waitFor('the change on the server', () => server.state().some((e) => e.feed_url === FEED), 20_000);
      // Settled: the service worker's run is over before the server's log is read.
      await sleep(500);
      expect(server.state().filter((e) => e.feed_url === FEED)).toHaveLength(1);
      expect(served(server.log().filter((e) => e.method === 'POST' && e.path.endsWith('/subscriptions')))).toHaveLength(1);
      // That one upload is the service worker's (its engine pulls before it pushes, so it sent none while the API was
      // unreachable), and no page of the app was open.
      expect(sw.sent().filter((r) => r.method === 'POST' && new URL(r.url).pathname.endsWith('/subscriptions'))).toHaveLength(1);
      expect(sw.pages()).toEqual(['about:blank']);
      await context.close();
    } finally {
      await app.close();
    }
  });

  it("the guide's Workbox service worker (precacheAndRoute, a NavigationRoute): an offline reload boots and an edit made then reaches the server", async () => {
    const app = await startPreviewApp({ workbox: true });
    try {
      const context = await browser.newContext();
      const page = await openApp(context, app, clientOptions(server, uniqueDbName('recipes-workbox')));
      await waitFor('the pulled list', async () => (await shown(page)).length === SEED, 30_000);
      const list = await shown(page);
      await goOffline(context, server);
      await app.stop();
      await page.reload();
      await waitFor('the cached list after the offline reload', async () => (await shown(page)).join() === list.join(), 30_000);
      await page.evaluate((feed) => window.app!.client.add(feed), FEED);
      server.clearFaults();
      await context.setOffline(false);
      await waitFor('the change on the server', () => server.state().some((e) => e.feed_url === FEED), 30_000);
      expect(server.state().filter((e) => e.feed_url === FEED)).toHaveLength(1);
      await context.close();
    } finally {
      await app.close();
    }
  });

  it('the control: the same service worker without ignoreVary misses its cache for the module scripts, and the app never starts', async () => {
    const guide = await guideServiceWorker();
    const withoutIgnoreVary = guide.replace('{ ignoreSearch: true, ignoreVary: true }', '{ ignoreSearch: true }');
    expect(withoutIgnoreVary).not.toBe(guide);
    const app = await startPreviewApp({ serviceWorker: withoutIgnoreVary });
    try {
      const context = await browser.newContext();
      const page = await openApp(context, app, clientOptions(server, uniqueDbName('recipes-vary')));
      await waitFor('the pulled list', async () => (await shown(page)).length === SEED, 30_000);
      await goOffline(context, server);
      await app.stop();
      await page.reload();
      // The document is served from the cache (a navigation sends no Origin); once it has loaded, its module
      // script has run or failed: here it failed, so the page never said it was ready.
      await waitFor('the offline document loaded', () => page.evaluate(() => document.readyState === 'complete'), 30_000);
      expect(await page.evaluate(() => document.getElementById('state')?.textContent)).toBe('starting');
      await context.close();
    } finally {
      await app.close();
    }
  });
});

/** Where the app's main.ts, as the server at `appUrl` sends it, imports opa-sync from. */
async function opaSyncImport(appUrl: string): Promise<string | undefined> {
  const main = await (await fetch(new URL('main.ts', appUrl))).text();
  return /import \{[^}]*\} from "([^"]*)"/.exec(main)?.[1];
}

/**
 * The proxy case, one app and one path family: the client with `baseUrl: location.origin` pulls the seeded list
 * and pushes an add, both through the app's origin to a gPodder server that sends no CORS headers.
 */
async function syncsThroughProxy(browser: Browser, gpodder: GpodderServer, appUrl: string, protocol: 'gpodder' | 'nextcloud', label: string): Promise<void> {
  gpodder.reset();
  const context = await browser.newContext();
  const page = await context.newPage();
  const options: PageOptions = {
    protocol,
    baseUrl: new URL(appUrl).origin,
    auth: { type: 'basic', username: 'alice', password: 'alice-password' },
    device: 'opa-sync',
    dbName: uniqueDbName(`recipes-${protocol}-${label}`),
    pullInterval: 0,
    pushDelay: 20,
  };
  await page.goto(`${appUrl}index.html?options=${encodeURIComponent(JSON.stringify(options))}`);
  await waitFor('the client', () => page.evaluate(() => window.app !== undefined), 30_000);
  await page.evaluate(() => window.app!.client.sync());
  const seeded = gpodder.subscribed();
  expect(seeded).toHaveLength(SEED);
  await waitFor('the pulled list', async () => (await shown(page)).sort().join() === [...seeded].sort().join(), 30_000);
  await page.evaluate((feed) => window.app!.client.add(feed), FEED);
  // mygpo keeps a list per device (the gPodder paths write this device's); the Nextcloud paths, the account's.
  const list = protocol === 'gpodder' ? { device: 'opa-sync' } : {};
  await waitFor('the added feed on the server', () => gpodder.subscribed(list).includes(FEED), 30_000);
  await context.close();
}

describe('the same-origin proxy, as docs/servers.md shows it, under vite preview and the vite dev server', () => {
  forEachEngine((engine) => {
    const env = perBlock(
      async () => {
        // As opodsync answers: no CORS headers, a preflight refused.
        const gpodder: GpodderServer = await startGpodderServer({ port: 0, cors: false, seed: SEED });
        // The guide's vite.config.ts as it is written, pointed at this server: built and previewed, and in dev.
        const config = await guideProxyConfig(gpodder.url);
        const preview = await startPreviewApp({ viteConfig: config });
        const dev = await startDevApp(config);
        const browser = await launchBrowser(engine);
        return { gpodder, apps: { preview, dev }, browser };
      },
      async ({ gpodder, apps, browser }) => {
        await browser.close();
        await apps.preview.close();
        await apps.dev.close();
        await gpodder.close();
      },
    );

    it.each(['gpodder', 'nextcloud'] as const)("vite preview: protocol '%s' with baseUrl: location.origin syncs both ways through preview.proxy", async (protocol) => {
      const { gpodder, apps, browser } = env();
      await syncsThroughProxy(browser, gpodder, apps.preview.url, protocol, `preview-${engine}`);
    });

    it.each(['gpodder', 'nextcloud'] as const)("vite (the dev server): protocol '%s' with baseUrl: location.origin syncs both ways through server.proxy", async (protocol) => {
      const { gpodder, apps, browser } = env();
      // The dependency optimizer pre-bundled opa-sync, away from its worker file: the case that could break the
      // worker's `new URL(…, import.meta.url)` (Vite points it back at the package's file: vitejs/vite#21434).
      expect(await opaSyncImport(apps.dev.url)).toMatch(/^\/node_modules\/\.vite\/deps\/opa-sync\.js\b/);
      await syncsThroughProxy(browser, gpodder, apps.dev.url, protocol, `dev-${engine}`);
    });
  });
});
