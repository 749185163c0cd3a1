// The real client in every engine: first sync over comlink, then a change made while the server is
// unreachable survives a reload in IndexedDB and reaches the server exactly once when it is back.
import { describe, expect, it } from 'vitest';
import {
  clientOptions,
  forEachEngine,
  openPage,
  pageErrors,
  ready,
  requestsFor,
  served,
  harnessPerFile,
  uniqueDbName,
  waitFor,
} from './support/harness.ts';

const SEED = 12;

forEachEngine((engine) => {
  const h = harnessPerFile(engine, { seed: SEED });

  describe('sync through the module worker', () => {
    it('pulls every subscription on the first sync and reports it in status', async () => {
      const context = await h.browser.newContext();
      const page = await openPage(context, h.pages.url, clientOptions(h.server, uniqueDbName('first')));
      const result = await page.evaluate(async () => {
        const report = await window.opa.client.sync();
        const subscriptions = await window.opa.client.subscriptions({ includeDeleted: true });
        const status = await window.opa.client.status();
        return { report, subscriptions, status };
      });
      const expected = h.server.state();
      expect(expected).toHaveLength(SEED);
      expect(result.subscriptions.map((s) => s.guid).sort()).toEqual(expected.map((e) => e.guid).sort());
      for (const s of result.subscriptions) {
        const e = h.server.entry(s.guid)!;
        expect({ feedUrl: s.feedUrl, isSubscribed: s.isSubscribed, pending: s.pending }).toEqual({
          feedUrl: e.feed_url,
          isSubscribed: e.is_subscribed,
          pending: false,
        });
      }
      expect(result.report).toMatchObject({ pending: 0, failed: 0, cursor: result.status.cursor });
      expect(result.status).toMatchObject({ leader: true, pending: 0, failed: 0, online: true });
      expect(result.status.cursor).toMatch(/^\d{4}-\d\d-\d\dT/);
      // A pull's changes are announced to the page as events over comlink.
      await waitFor('change events for every pulled subscription', () =>
        page.evaluate((n) => new Set(window.opa.events.change.flatMap((e) => e.guids)).size === n, SEED),
      );

      // Another device changes one subscription: the next sync pulls exactly that one and says so.
      const changed = expected[3];
      h.server.foreign.patch(changed.guid, { is_subscribed: !changed.is_subscribed });
      const again = await page.evaluate(async (guid) => {
        const report = await window.opa.client.sync();
        return { report, view: await window.opa.client.subscription(guid) };
      }, changed.guid);
      expect(again.report.pulled).toBe(1);
      expect(again.report.requests).toBeGreaterThanOrEqual(1);
      expect(again.view).toMatchObject({ isSubscribed: !changed.is_subscribed, pending: false });
      // Events travel on their own port, so they may land just after sync() resolves.
      await waitFor('the change event for that one subscription', () =>
        page.evaluate((g) => window.opa.events.change.some((e) => e.guids.length === 1 && e.guids[0] === g), changed.guid),
      );
      expect(await pageErrors(page)).toEqual([]);
      await context.close();
    });

    it('keeps a change made while the server is unreachable across a reload and pushes it exactly once', async () => {
      const context = await h.browser.newContext();
      const options = clientOptions(h.server, uniqueDbName('reload'));
      const page = await openPage(context, h.pages.url, options);
      await page.evaluate(() => window.opa.client.sync());
      const target = h.server.state().find((e) => e.is_subscribed && !e.deleted)!;
      expect(target).toBeDefined();

      // Unreachable: every request's connection is cut before the server acts on it.
      h.server.dropNext(10_000);
      const view = await page.evaluate((guid) => window.opa.client.update(guid, { isSubscribed: false }), target.guid);
      expect(view).toMatchObject({ guid: target.guid, isSubscribed: false, pending: true });
      // The leader tried and failed: status says offline, the change is still queued.
      await waitFor('a failed attempt to push', () => requestsFor(h.server, 'PATCH', target.guid).length > 0);
      const offline = await waitFor('status offline', () =>
        page.evaluate(async () => {
          const s = await window.opa.client.status();
          return s.phase === 'unreachable' && !s.online ? s : undefined;
        }),
      );
      expect(offline.pending).toBe(1);

      await page.reload();
      await ready(page);
      const pending = await page.evaluate(() => window.opa.client.pending());
      expect(pending).toHaveLength(1);
      expect(pending[0]).toMatchObject({ kind: 'update', guid: target.guid, change: { isSubscribed: false } });
      expect(await page.evaluate((guid) => window.opa.client.subscription(guid), target.guid)).toMatchObject({
        isSubscribed: false,
        pending: true,
      });
      expect(served(requestsFor(h.server, 'PATCH', target.guid))).toHaveLength(0);
      expect(h.server.entry(target.guid)!.is_subscribed).toBe(true);

      // The server comes back; the reloaded page's worker retries on its own (no sync() call).
      h.server.clearFaults();
      await waitFor('the queue to drain', () => page.evaluate(async () => (await window.opa.client.pending()).length === 0));
      // A sync() may join a background run whose pull started while the server was still cut off (that run
      // rejects with 'network' although its push went through), so wait for one that succeeds.
      await waitFor('a clean sync', () => page.evaluate(() => window.opa.client.sync().then(() => true, () => false)));
      expect(served(requestsFor(h.server, 'PATCH', target.guid))).toHaveLength(1);
      expect(h.server.entry(target.guid)!.is_subscribed).toBe(false);
      expect(await page.evaluate((guid) => window.opa.client.subscription(guid), target.guid)).toMatchObject({
        isSubscribed: false,
        pending: false,
      });
      // A background pull (a retry scheduled during the outage) may still be running: wait for idle.
      const status = await waitFor('an idle status', () =>
        page.evaluate(async () => {
          const s = await window.opa.client.status();
          return s.phase === 'idle' ? s : undefined;
        }),
      );
      expect(status).toMatchObject({ phase: 'idle', online: true, pending: 0, failed: 0 });
      expect(await pageErrors(page)).toEqual([]);
      await context.close();
    });
  });
});
