// The page's connectivity and visibility reach the worker: offline queues, online pushes; a hidden tab keeps
// pushing and a tab becoming visible pulls. Offline is the browser's own switch in Chromium and Firefox, and
// in WebKit (no such control over WebDriver) navigator.onLine plus the window's offline/online events; in
// every engine the reference server also cuts every connection meanwhile.
import { describe, expect, it } from 'vitest';
import {
  clientOptions,
  openPage,
  pageErrors,
  requestsFor,
  served,
  sleep,
  harnessPerFile,
  forEachEngine,
  goOffline,
  goOnline,
  uniqueDbName,
  waitFor,
} from './support/harness.ts';

forEachEngine((engine) => {
  const h = harnessPerFile(engine, { seed: 6 });

  describe('offline and online', () => {
    it('queues changes while the browser is offline and pushes them when it is back', async () => {
      const context = await h.browser.newContext();
      const page = await openPage(context, h.pages.url, clientOptions(h.server, uniqueDbName('offline')));
      await page.evaluate(() => {
        window.opa.scratch.offlineEvents = 0;
        window.addEventListener('offline', () => void (window.opa.scratch.offlineEvents = (window.opa.scratch.offlineEvents as number) + 1));
        return window.opa.client.sync();
      });
      const [a, b] = h.server.state().filter((e) => !e.deleted);

      await goOffline(context, h.server);
      await waitFor('the page to see the offline event', () => page.evaluate(() => window.opa.scratch.offlineEvents === 1));
      const status = await waitFor('status phase offline', () =>
        page.evaluate(async () => {
          const s = await window.opa.client.status();
          return s.phase === 'offline' ? s : undefined;
        }),
      );
      expect(status.online).toBe(false);
      // Status events are coalesced over a few ms: wait for the one that says offline.
      await waitFor('a status event saying offline', () =>
        page.evaluate(() => window.opa.events.status.some((s) => s.phase === 'offline' && !s.online)),
      );

      const before = h.server.log().length;
      await page.evaluate(
        async ({ a, b }) => {
          await window.opa.client.update(a, { isSubscribed: false });
          await window.opa.client.update(b, { feedUrl: 'https://offline-edit.example/feed.xml' });
        },
        { a: a.guid, b: b.guid },
      );
      const syncWhileOffline = await page.evaluate(() =>
        window.opa.client.sync().then(
          () => 'resolved',
          (e: { code?: string }) => e.code,
        ),
      );
      expect(syncWhileOffline).toBe('offline');
      await sleep(500); // far past pushDelay: a push would have happened by now
      expect(h.server.log().length).toBe(before);
      const pending = await page.evaluate(() => window.opa.client.pending());
      expect(pending.map((p) => p.guid).sort()).toEqual([a.guid, b.guid].sort());
      expect((await page.evaluate(() => window.opa.client.status())).pending).toBe(2);

      await goOnline(context, h.server);
      await waitFor('the queue to drain after online', () => page.evaluate(async () => (await window.opa.client.pending()).length === 0));
      expect(served(requestsFor(h.server, 'PATCH', a.guid))).toHaveLength(1);
      expect(served(requestsFor(h.server, 'PATCH', b.guid))).toHaveLength(1);
      expect(h.server.entry(a.guid)).toMatchObject({ is_subscribed: false });
      expect(h.server.entry(b.guid)).toMatchObject({ feed_url: 'https://offline-edit.example/feed.xml' });
      const after = await waitFor('status back online', () =>
        page.evaluate(async () => {
          const s = await window.opa.client.status();
          return s.phase === 'idle' && s.online ? s : undefined;
        }),
      );
      expect(after.pending).toBe(0);
      expect(await pageErrors(page)).toEqual([]);
      await context.close();
    });

    // Headless pages are always 'visible', so visibility is emulated: document.visibilityState is
    // overridden and visibilitychange dispatched. That exercises the client's forwarding and the engine's
    // reaction; it does not reproduce a browser's timer throttling of real background tabs.
    it('keeps pushing from a hidden tab and pulls when the tab becomes visible', async () => {
      const context = await h.browser.newContext();
      const page = await openPage(context, h.pages.url, clientOptions(h.server, uniqueDbName('hidden')));
      await page.evaluate(() => window.opa.client.sync());
      const [a, b] = h.server.state().filter((e) => !e.deleted);
      const setVisibility = (state: 'hidden' | 'visible') =>
        page.evaluate((s) => {
          Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => s });
          Object.defineProperty(document, 'hidden', { configurable: true, get: () => s === 'hidden' });
          document.dispatchEvent(new Event('visibilitychange'));
        }, state);

      await setVisibility('hidden');
      await page.evaluate(({ guid, on }) => window.opa.client.update(guid, { isSubscribed: on }), { guid: a.guid, on: !a.is_subscribed });
      await waitFor('a push from the hidden tab', () => served(requestsFor(h.server, 'PATCH', a.guid)).length === 1);
      expect(await page.evaluate(() => document.visibilityState)).toBe('hidden');
      expect(h.server.entry(a.guid)!.is_subscribed).toBe(!a.is_subscribed);
      await waitFor('the hidden tab to see its change acknowledged', () =>
        page.evaluate(async (g) => (await window.opa.client.subscription(g))?.pending === false, a.guid),
      );

      // Another device changes b; with pullInterval 0 nothing pulls it until the tab becomes visible.
      h.server.foreign.patch(b.guid, { new_feed_url: 'https://elsewhere.example/rss' });
      await sleep(300);
      expect(await page.evaluate((g) => window.opa.client.subscription(g), b.guid)).toMatchObject({ feedUrl: b.feed_url });
      await setVisibility('visible');
      await waitFor('the pull on becoming visible', () =>
        page.evaluate(async (g) => (await window.opa.client.subscription(g))?.feedUrl === 'https://elsewhere.example/rss', b.guid),
      );
      await waitFor('the change event for the pulled entry', () =>
        page.evaluate((g) => window.opa.events.change.some((e) => e.guids.includes(g)), b.guid),
      );
      expect(await pageErrors(page)).toEqual([]);
      await context.close();
    });
  });
});
