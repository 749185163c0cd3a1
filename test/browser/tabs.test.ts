// Several tabs of one browser profile on one database: one leader (Web Lock) talks to the server, every tab
// may enqueue and sees every change, and closing the leader's tab hands the job to another. Which tab sent a
// request is read from each tab's worker (the package's entry with its fetch calls logged), in every engine.
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
  uniqueDbName,
  waitFor,
  type BrowserPage,
} from './support/harness.ts';

/** Which of `pages` say they lead, once exactly one does. */
async function soleLeader(pages: BrowserPage[]): Promise<BrowserPage> {
  return waitFor('exactly one leader', async () => {
    const leading = await Promise.all(pages.map((p) => p.evaluate(async () => (await window.opa.client.status()).leader)));
    const leaders = pages.filter((_, i) => leading[i]);
    return leaders.length === 1 ? leaders[0] : undefined;
  });
}

/** The requests `page`'s worker sent (`METHOD /path`), from the page's fetch log (`worker: 'logged'`). */
function sentBy(page: BrowserPage): Promise<string[]> {
  return page.evaluate(() => [...window.opa.requests]);
}

forEachEngine((engine) => {
  const h = harnessPerFile(engine, { seed: 8 });

  describe('several tabs', () => {
    it('one leader talks to the server, every tab sees every change, and leadership moves when the leader closes', async () => {
      const context = await h.browser.newContext();
      const options = clientOptions(h.server, uniqueDbName('tabs'));
      const tabs: BrowserPage[] = [];
      for (let i = 0; i < 3; i++) tabs.push(await openPage(context, h.pages.url, options, { worker: 'logged' }));
      const leader = await soleLeader(tabs);
      const followers = tabs.filter((t) => t !== leader);

      // A follower's sync() is carried out by the leader and answered over the channel.
      const report = await followers[0].evaluate(() => window.opa.client.sync());
      expect(report.cursor).toBeDefined();
      await waitFor('every tab to hold the pulled state', async () => {
        const counts = await Promise.all(tabs.map((t) => t.evaluate(async () => (await window.opa.client.subscriptions()).length)));
        return counts.every((n) => n === h.server.state().filter((e) => !e.deleted).length);
      });

      // Each tab changes a different subscription.
      const targets = h.server.state().filter((e) => !e.deleted).slice(0, 3);
      await Promise.all(
        tabs.map((tab, i) =>
          tab.evaluate(({ guid, on }) => window.opa.client.update(guid, { isSubscribed: on }), {
            guid: targets[i].guid,
            on: !targets[i].is_subscribed,
          }),
        ),
      );
      await waitFor('every change on the server', () => targets.every((t) => h.server.entry(t.guid)!.is_subscribed !== t.is_subscribed));
      await waitFor('every queue empty', async () => {
        const pending = await Promise.all(tabs.map((t) => t.evaluate(async () => (await window.opa.client.status()).pending)));
        return pending.every((n) => n === 0);
      });
      await sleep(300); // room for a duplicate push to show up, were there one
      for (const t of targets) expect(served(requestsFor(h.server, 'PATCH', t.guid))).toHaveLength(1);
      expect(h.server.log().filter((e) => e.method === 'PATCH')).toHaveLength(3);

      // Every tab heard about every change (its own through its worker, the others' through the channel).
      for (const tab of tabs) {
        await waitFor('change events in every tab', () =>
          tab.evaluate((guids) => {
            const heard = new Set(window.opa.events.change.flatMap((e) => e.guids));
            return guids.every((g) => heard.has(g));
          }, targets.map((t) => t.guid)),
        );
      }

      // Only the leader's worker sent requests.
      expect((await sentBy(leader)).filter((r) => r.startsWith('PATCH'))).toHaveLength(3);
      for (const f of followers) expect(await sentBy(f)).toEqual([]);
      for (const tab of tabs) expect(await pageErrors(tab)).toEqual([]);

      // The leader's tab closes; another takes over and keeps syncing.
      await leader.close();
      const next = await soleLeader(followers);
      const other = followers.find((f) => f !== next)!;
      const late = h.server.state().filter((e) => !e.deleted)[3];
      await other.evaluate(({ guid, on }) => window.opa.client.update(guid, { isSubscribed: on }), {
        guid: late.guid,
        on: !late.is_subscribed,
      });
      await waitFor('the late change on the server', () => h.server.entry(late.guid)!.is_subscribed !== late.is_subscribed);
      await sleep(300);
      expect(served(requestsFor(h.server, 'PATCH', late.guid))).toHaveLength(1);
      expect((await sentBy(next)).filter((r) => r.startsWith('PATCH'))).toEqual([`PATCH /v1/subscriptions/${encodeURIComponent(late.guid)}`]);
      expect(await sentBy(other)).toEqual([]);
      await waitFor('both remaining tabs to hear the late change', async () => {
        const heard = await Promise.all(
          followers.map((t) => t.evaluate((g) => window.opa.events.change.some((e) => e.guids.includes(g)), late.guid)),
        );
        return heard.every(Boolean);
      });
      expect(await other.evaluate((g) => window.opa.client.subscription(g), late.guid)).toMatchObject({
        isSubscribed: !late.is_subscribed,
        pending: false,
      });
      await context.close();
    });
  });
});
