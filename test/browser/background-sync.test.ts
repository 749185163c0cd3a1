// Changes leave after the app is closed: a change made while the server is unreachable, every page closed,
// the server back and Chromium's sync event fired (CDP) puts it on the server once, sent by the app's service
// worker (opa-sync/sw). Playwright's offline switch does not reach a service worker's fetches, so the server
// itself is unreachable (it drops every connection). No credential is left in IndexedDB or Cache Storage.
// Firefox and WebKit have no Background Sync: the same app works there, says so in the status, and the next open
// delivers. The service worker stopped mid-push, a tab opened while it pushes: background-sync-sw.test.ts.
import { expect, it } from 'vitest';
import { clientOptions, forEachEngine, harnessPerFile, openPage, pageErrors, requestsFor, served, sleep, uniqueDbName, waitFor } from './support/harness.ts';
import { controlServiceWorker, everythingStored, registerAppServiceWorker } from './support/service-worker.ts';

const FEED = 'https://feeds.example/background/left-behind.xml';

forEachEngine((engine) => {
  const h = harnessPerFile(engine);

  if (engine === 'chromium') {
    it('a change made while the server is unreachable, every page closed, the server back: the sync event puts it on the server once; no credential stored', async () => {
      const context = await h.browser.newContext();
      const page = await openPage(context, h.pages.url, clientOptions(h.server, uniqueDbName('background'), { backgroundSync: true }));
      await registerAppServiceWorker(page);
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
      const sw = await controlServiceWorker(context, h.pages.url);
      await page.close();
      h.server.clearFaults();
      h.server.clearLog();
      await sw.fireSync();
      await waitFor('the change on the server, sent by the service worker', () => h.server.state().some((e) => e.feed_url === FEED), 20_000);
      // Settled: the service worker's run is over before the server's log is read.
      await sleep(500);
      expect(h.server.state().filter((e) => e.feed_url === FEED)).toHaveLength(1);
      expect(served(h.server.log().filter((e) => e.method === 'POST' && e.path.endsWith('/subscriptions')))).toHaveLength(1);
      expect(served(requestsFor(h.server, 'PATCH', guid))).toHaveLength(0);
      // No credential anywhere the origin stores things (the store, the registry, Cache Storage).
      await sw.blank.goto(`${h.pages.url}inert.html`);
      const stored = await everythingStored(sw.blank);
      expect(stored).toContain(FEED);
      expect(stored).toContain('opa-sync-background');
      expect(stored).not.toContain('demo-token');
      await context.close();
    });

    it('the page closed 300 ms after a change whose push waits on a server that does not answer: a tag covers it before the close, and the service worker sends it once the server is back (issue 34)', async () => {
      const context = await h.browser.newContext();
      const page = await openPage(context, h.pages.url, clientOptions(h.server, uniqueDbName('background-mid-push'), { backgroundSync: true }));
      await registerAppServiceWorker(page);
      await sleep(300);
      await page.evaluate(() => window.opa.client.sync());
      // No answer: each request is held, then its connection cut unapplied (a proxy's upstream timeout).
      h.server.setLatency(1500);
      h.server.dropNext(1_000_000);
      h.server.clearLog();
      await page.evaluate((feed) => window.opa.client.add(feed), FEED);
      const tags = await page.evaluate(async () => {
        const registration = (await navigator.serviceWorker.ready) as unknown as { sync: { getTags(): Promise<string[]> } };
        // The status event that registers may still be on its way: at most the 300 ms the close allows.
        for (let i = 0; i < 30; i++) {
          const found = await registration.sync.getTags();
          if (found.length) return found;
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        return registration.sync.getTags();
      });
      expect(tags).toContain('opa-sync');
      expect(served(h.server.log())).toHaveLength(0);
      await page.close();
      // The server back: what was held ends cut, then requests are answered.
      h.server.setLatency(0);
      await sleep(1600);
      h.server.clearFaults();
      await waitFor('the change on the server, sent by the service worker with every page closed', () => h.server.state().some((e) => e.feed_url === FEED), 20_000);
      await sleep(500);
      expect(h.server.state().filter((e) => e.feed_url === FEED)).toHaveLength(1);
      await context.close();
    });
  } else {
    it('backgroundSync: true without Background Sync: the same app starts with no error, the status says unsupported, the next open delivers a change made before the close', async () => {
      const context = await h.browser.newContext();
      const options = clientOptions(h.server, uniqueDbName('background'), { backgroundSync: true });
      const page = await openPage(context, h.pages.url, options);
      await registerAppServiceWorker(page);
      await page.evaluate(() => window.opa.client.sync());
      // The server unreachable: the push fails, the change waits, and nothing can register a sync.
      h.server.dropNext(1_000_000);
      await page.evaluate((feed) => window.opa.client.add(feed), FEED);
      await waitFor('the push failed', async () => (await page.evaluate(() => window.opa.client.status())).lastError?.code === 'network', 15_000);
      const status = await page.evaluate(() => window.opa.client.status());
      expect(status.backgroundSync).toBe('unsupported');
      expect(status.pending).toBe(1);
      expect(await pageErrors(page)).toEqual([]);
      await page.close();
      h.server.clearFaults();
      expect(h.server.state().some((e) => e.feed_url === FEED)).toBe(false);
      const next = await openPage(context, h.pages.url, options);
      await waitFor('the change on the server, sent by the next open', () => h.server.state().some((e) => e.feed_url === FEED), 15_000);
      await waitFor('nothing waits', async () => (await next.evaluate(() => window.opa.client.status())).pending === 0, 15_000);
      expect(h.server.state().filter((e) => e.feed_url === FEED)).toHaveLength(1);
      expect(await pageErrors(next)).toEqual([]);
      await context.close();
    });
  }
});
