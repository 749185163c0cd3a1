// Booting offline (issue 26, part 2): an app whose service worker caches its built files (the library's worker
// file among them) and serves them cache-first, as docs/service-worker.md ("Booting offline") shows by hand. Loaded online with the service
// worker installed, then offline (the app's own origin and the API both unreachable) and reloaded: the page
// boots, the store shows the cached list, an edit made then is queued and reaches the server once the network
// is back. The same service worker leaving the worker file out of its cache: the offline reload cannot start
// the library (the check that the first test depends on the worker file being served). Chromium, a real
// service worker.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startServer } from '../server/server.ts';
import type { RefServer } from '../server/types.ts';
import { launchBrowser, selectedEngines, type Browser, type BrowserContext, type BrowserPage } from '../support/browsers.ts';
import { clientOptions, goOffline, uniqueDbName, waitFor } from './support/harness.ts';
import { openInstalled, startOfflineApp, type OfflineApp } from './support/offline-app.ts';
import type { SyncClient } from '../../src/index.ts';

const SEED = 5;
const FEED = 'https://feeds.example/offline-boot/added-offline.xml';

declare global {
  interface Window {
    app?: { client: SyncClient };
  }
}

/** The feed URLs the app's list shows. */
const shown = (page: BrowserPage) => page.evaluate(() => [...document.querySelectorAll('#list li')].map((li) => li.textContent ?? ''));

/** Open the app online with its service worker (`sw.js` + `query`) controlling it, and wait for the pulled list. */
async function installed(context: BrowserContext, app: OfflineApp, server: RefServer, query: string): Promise<BrowserPage> {
  const page = await openInstalled(context, app, clientOptions(server, uniqueDbName('offline-boot')), query);
  await waitFor('the pulled list', async () => (await shown(page)).length === SEED, 30_000);
  return page;
}

describe.runIf(selectedEngines().includes('chromium'))('chromium', () => {
  let browser: Browser;
  let server: RefServer;
  let app: OfflineApp;

  beforeAll(async () => {
    app = await startOfflineApp();
    server = await startServer({ port: 0, seed: SEED });
    browser = await launchBrowser('chromium');
  });

  beforeEach(() => server.reset());

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await server?.close().catch(() => undefined);
    await app?.close().catch(() => undefined);
  });

  it('an offline reload boots from the service worker: the cached list shows, an edit is queued and reaches the server once the network is back', async () => {
    const context = await browser.newContext();
    const page = await installed(context, app, server, '');
    const list = await shown(page);
    // Offline: the API drops every connection and the app's own origin answers nothing at all.
    await goOffline(context, server);
    await app.stop();
    await page.reload();
    await waitFor('the cached list after the offline reload', async () => (await shown(page)).join() === list.join(), 30_000);
    await page.evaluate((feed) => window.app!.client.add(feed), FEED);
    const queued = await page.evaluate(() => window.app!.client.status());
    expect(queued).toMatchObject({ pending: 1, online: false });
    expect(server.state().some((e) => e.feed_url === FEED)).toBe(false);

    server.clearFaults();
    await context.setOffline(false);
    await waitFor('the change on the server', () => server.state().some((e) => e.feed_url === FEED), 30_000);
    await waitFor('nothing waiting', async () => (await page.evaluate(() => window.app!.client.status())).pending === 0, 15_000);
    expect(server.state().filter((e) => e.feed_url === FEED)).toHaveLength(1);
    await context.close();
  });

  it('the same service worker without the worker file in its cache: the offline reload cannot start the library', async () => {
    // Its own app build and origin: the first test stopped the other's server.
    const bare = await startOfflineApp();
    try {
      const context = await browser.newContext();
      const page = await installed(context, bare, server, '?leave=worker');
      await goOffline(context, server);
      await bare.stop();
      await page.reload();
      await waitFor('the page script (served from the cache)', () => page.evaluate(() => document.getElementById('state')?.textContent === 'ready'), 30_000);
      await waitFor('the status saying the worker never loaded', async () => (await page.evaluate(() => window.app!.client.status())).phase === 'unavailable', 30_000);
      expect(await shown(page)).toEqual([]);
      await context.close();
    } finally {
      await bare.close();
    }
  });
});
