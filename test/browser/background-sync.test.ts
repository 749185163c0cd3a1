// Changes leave after the app is closed: a change made while the server is unreachable, every page closed,
// the server back and Chromium's sync event fired (CDP) puts it on the server once, sent by the app's service
// worker (opa-sync/sw). Playwright's offline switch does not reach a service worker's fetches, so the server
// itself is unreachable (it drops every connection). No credential is left in IndexedDB or Cache Storage.
// Firefox and WebKit have no Background Sync: `backgroundSync: true` works there and says so in the status.
import { expect, it } from 'vitest';
import { playwrightPage } from '../support/drivers/chromium.ts';
import { clientOptions, forEachEngine, harnessPerFile, openPage, requestsFor, served, sleep, uniqueDbName, waitFor, type BrowserPage } from './support/harness.ts';

const FEED = 'https://feeds.example/background/left-behind.xml';

/** Every IndexedDB database and Cache Storage entry of the page's origin, as text. */
async function everythingStored(page: BrowserPage): Promise<string> {
  return page.evaluate(async () => {
    const out: Record<string, unknown> = {};
    for (const { name } of await indexedDB.databases()) {
      const db = await new Promise<IDBDatabase>((resolve, reject) => {
        const r = indexedDB.open(name!);
        r.onsuccess = () => resolve(r.result);
        r.onerror = () => reject(r.error);
      });
      for (const store of db.objectStoreNames) {
        out[`idb:${name}/${store}`] = await new Promise((resolve, reject) => {
          const r = db.transaction(store).objectStore(store).getAll();
          r.onsuccess = () => resolve(r.result);
          r.onerror = () => reject(r.error);
        });
      }
      db.close();
    }
    for (const key of await caches.keys()) {
      const cache = await caches.open(key);
      for (const request of await cache.keys()) {
        out[`cache:${key}:${request.url}`] = { headers: [...request.headers], body: await (await cache.match(request))!.text() };
      }
    }
    return JSON.stringify(out);
  });
}

forEachEngine((engine) => {
  const h = harnessPerFile(engine);

  if (engine === 'chromium') {
    it('a change made while the server is unreachable, every page closed, the server back: the sync event puts it on the server once; no credential stored', async () => {
      const context = await h.browser.newContext();
      const page = await openPage(context, h.pages.url, clientOptions(h.server, uniqueDbName('background'), { backgroundSync: true }));
      await page.evaluate(async () => {
        await navigator.serviceWorker.register('/background-sw.ts', { type: 'module', scope: '/' });
        await navigator.serviceWorker.ready;
      });
      // Measured: faulting the network right after activation sometimes closed the page under Playwright.
      await sleep(300);
      await page.evaluate(() => window.opa.client.sync());
      h.server.dropNext(1_000_000);
      const guid = await page.evaluate(async (feed) => (await window.opa.client.add(feed)).guid, FEED);
      await waitFor('the tag registered after the failed push', async () => {
        const status = await page.evaluate(() => window.opa.client.status());
        return status.pending === 1 && status.backgroundSync === 'registered';
      }, 15_000);
      // Every page closed: a blank tab keeps the browser context, and its CDP session, alive.
      const blank = await context.newPage();
      const blankNative = playwrightPage(blank)!;
      const session = await blankNative.context().newCDPSession(blankNative);
      const registrationId = new Promise<string>((resolve) => {
        session.on('ServiceWorker.workerRegistrationUpdated', ({ registrations }) => {
          const ours = registrations.find((r) => r.scopeURL === h.pages.url && !r.isDeleted);
          if (ours) resolve(ours.registrationId);
        });
      });
      await session.send('ServiceWorker.enable');
      const id = await registrationId;
      await page.close();
      h.server.clearFaults();
      h.server.clearLog();
      await session.send('ServiceWorker.dispatchSyncEvent', { origin: new URL(h.pages.url).origin, registrationId: id, tag: 'opa-sync', lastChance: false });
      await waitFor('the change on the server, sent by the service worker', () => h.server.state().some((e) => e.feed_url === FEED), 20_000);
      // Settled: the service worker's run is over before the server's log is read.
      await sleep(500);
      expect(h.server.state().filter((e) => e.feed_url === FEED)).toHaveLength(1);
      expect(served(h.server.log().filter((e) => e.method === 'POST' && e.path.endsWith('/subscriptions')))).toHaveLength(1);
      expect(served(requestsFor(h.server, 'PATCH', guid))).toHaveLength(0);
      // No credential anywhere the origin stores things (the store, the registry, Cache Storage).
      await blank.goto(`${h.pages.url}inert.html`);
      const stored = await everythingStored(blank);
      expect(stored).toContain(FEED);
      expect(stored).toContain('opa-sync-background');
      expect(stored).not.toContain('demo-token');
      await context.close();
    });
  } else {
    it('backgroundSync: true works without Background Sync: no error, the status says unsupported, the change goes up', async () => {
      const context = await h.browser.newContext();
      const page = await openPage(context, h.pages.url, clientOptions(h.server, uniqueDbName('background'), { backgroundSync: true }));
      await page.evaluate((feed) => window.opa.client.add(feed), FEED);
      await page.evaluate(() => window.opa.client.sync());
      const status = await page.evaluate(() => window.opa.client.status());
      expect(status.backgroundSync).toBe('unsupported');
      expect(status.pending).toBe(0);
      expect(h.server.state().some((e) => e.feed_url === FEED)).toBe(true);
      expect(await page.evaluate(() => window.opa.errors)).toEqual([]);
      await context.close();
    });
  }
});
