// Where a browser lacks a platform feature the library leans on, it degrades instead of breaking. Without Web
// Locks (Safari before 15.4, any page that is not a secure context) tabs elect a leader over BroadcastChannel;
// with neither, a tab cannot see the others, so it syncs on its own and says it leads. The features are taken
// away inside the worker, before the package's own entry loads (test/browser/pages/*-worker.ts).
import { describe, expect, it } from 'vitest';
import {
  clientOptions,
  forEachEngine,
  harnessPerFile,
  openPage,
  pageErrors,
  requestsFor,
  served,
  sleep,
  uniqueDbName,
  waitFor,
  type BrowserPage,
} from './support/harness.ts';

/** Which of `pages` say they lead, once exactly one does (and still does a moment later). */
async function soleLeader(pages: BrowserPage[]): Promise<BrowserPage> {
  const leaders = async () => {
    const leading = await Promise.all(pages.map((p) => p.evaluate(async () => (await window.opa.client.status()).leader)));
    return pages.filter((_, i) => leading[i]);
  };
  return waitFor('exactly one leader, twice in a row', async () => {
    const first = await leaders();
    if (first.length !== 1) return undefined;
    await sleep(200);
    const again = await leaders();
    return again.length === 1 && again[0] === first[0] ? first[0] : undefined;
  });
}

const sentBy = (page: BrowserPage): Promise<string[]> => page.evaluate(() => [...window.opa.requests]);

forEachEngine((engine) => {
  const h = harnessPerFile(engine, { seed: 6 });

  describe('without Web Locks in the worker', () => {
    it('elects one leader over BroadcastChannel, pushes each change once from it, and hands over when it closes', async () => {
      const context = await h.browser.newContext();
      const options = clientOptions(h.server, uniqueDbName('no-locks'));
      const tabs = [await openPage(context, h.pages.url, options, { worker: 'no-locks' }), await openPage(context, h.pages.url, options, { worker: 'no-locks' })];
      expect(await tabs[0].evaluate(() => window.opa.workerAnswers(5000))).toBe(true);
      const leader = await soleLeader(tabs);
      const follower = tabs.find((t) => t !== leader)!;

      // The follower's sync() runs in the leader; both tabs edit; only the leader's worker talks to the server.
      const report = await follower.evaluate(() => window.opa.client.sync());
      expect(report.cursor).toBeDefined();
      const [a, b, c] = h.server.state().filter((e) => !e.deleted);
      await leader.evaluate((g) => window.opa.client.update(g, { isSubscribed: false }), a.guid);
      await follower.evaluate((g) => window.opa.client.update(g, { feedUrl: 'https://no-locks.example/feed.xml' }), b.guid);
      await waitFor('both changes on the server', () => h.server.entry(a.guid)!.is_subscribed === false && h.server.entry(b.guid)!.feed_url === 'https://no-locks.example/feed.xml');
      await sleep(300); // room for a duplicate push to show up, were there one
      expect(served(requestsFor(h.server, 'PATCH', a.guid))).toHaveLength(1);
      expect(served(requestsFor(h.server, 'PATCH', b.guid))).toHaveLength(1);
      expect((await sentBy(leader)).filter((r) => r.startsWith('PATCH'))).toHaveLength(2);
      expect(await sentBy(follower)).toEqual([]);
      for (const tab of tabs) expect(await pageErrors(tab)).toEqual([]);

      // The leader's client closes (it resigns): the other tab takes over and pushes its next change itself.
      await leader.evaluate(() => window.opa.client.close());
      await waitFor('the other tab to lead', () => follower.evaluate(async () => (await window.opa.client.status()).leader));
      await follower.evaluate((g) => window.opa.client.update(g, { isSubscribed: false }), c.guid);
      await waitFor('the late change on the server', () => h.server.entry(c.guid)!.is_subscribed === false);
      expect((await sentBy(follower)).filter((r) => r.startsWith('PATCH'))).toEqual([`PATCH /v1/subscriptions/${c.guid}`]);
      expect(served(requestsFor(h.server, 'PATCH', c.guid))).toHaveLength(1);
      await context.close();
    });
  });

  describe('without Web Locks and BroadcastChannel in the worker', () => {
    it('syncs on its own, says it leads, and pushes a change once', async () => {
      const context = await h.browser.newContext();
      const page = await openPage(context, h.pages.url, clientOptions(h.server, uniqueDbName('bare')), { worker: 'bare' });
      const report = await page.evaluate(() => window.opa.client.sync());
      expect(report).toMatchObject({ pending: 0, failed: 0 });
      expect(await page.evaluate(() => window.opa.client.subscriptions({ includeDeleted: true }))).toHaveLength(h.server.state().length);
      expect(await page.evaluate(() => window.opa.client.status())).toMatchObject({ leader: true, phase: 'idle', pending: 0 });

      const [target] = h.server.state().filter((e) => e.is_subscribed && !e.deleted);
      await page.evaluate((g) => window.opa.client.update(g, { isSubscribed: false }), target.guid);
      await waitFor('the change on the server', () => h.server.entry(target.guid)!.is_subscribed === false);
      // Its own change events still arrive (they come from its worker, not from the channel).
      await waitFor('the change event', () => page.evaluate((g) => window.opa.events.change.some((e) => e.guids.includes(g)), target.guid));
      await sleep(300);
      expect(served(requestsFor(h.server, 'PATCH', target.guid))).toHaveLength(1);
      expect(await pageErrors(page)).toEqual([]);
      await context.close();
    });
  });
});
