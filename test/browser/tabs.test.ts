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
  pageUrl,
  uniqueDbName,
  waitFor,
  type BrowserContext,
  type BrowserPage,
  type PageOptions,
} from './support/harness.ts';
import type { RefServer, RequestLogEntry } from '../server/types.ts';

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

/**
 * Three tabs of one profile, all of them visible: the first opens the other two as windows of their own (a
 * background tab is hidden in Firefox and WebKit, and a hidden page does not poll), from a real click, as
 * WebKit lets a page open a window only on a user's gesture. The test drives the other two through the first
 * (`scratch.popups`: same origin, so their `window.opa` is reachable).
 */
async function threeVisibleTabs(context: BrowserContext, pagesUrl: string, options: PageOptions): Promise<BrowserPage> {
  const first = await openPage(context, pagesUrl, options, { worker: 'logged' });
  await first.evaluate((url) => {
    const popups: Window[] = [];
    window.opa.scratch.popups = popups;
    const button = document.createElement('button');
    button.id = 'open-tab';
    button.textContent = 'Open a tab';
    button.onclick = () => {
      const tab = window.open(url, `tab-${popups.length}`, 'popup,width=480,height=360');
      if (tab) popups.push(tab);
    };
    document.body.append(button);
  }, pageUrl(pagesUrl, options, { worker: 'logged' }));
  for (let i = 0; i < 2; i++) await first.click('#open-tab');
  await waitFor('the two opened tabs to be ready', () =>
    first.evaluate(() => {
      const popups = window.opa.scratch.popups as Window[];
      return popups.length === 2 && popups.every((p) => p.document?.getElementById('state')?.textContent === 'ready' && 'opa' in p);
    }), 30_000);
  return first;
}

/** What each of the three tabs says: visible, leading, requests its worker sent (first tab first). */
function tabStates(first: BrowserPage): Promise<{ visible: boolean; leader: boolean; sent: string[] }[]> {
  return first.evaluate(() =>
    Promise.all(
      [window, ...(window.opa.scratch.popups as Window[])].map(async (w) => ({
        visible: w.document.visibilityState === 'visible',
        leader: (await w.opa.client.status()).leader,
        sent: [...w.opa.requests],
      })),
    ),
  );
}

/** Close the opened tabs (their workers would otherwise keep polling until the context goes). */
async function closeTabs(first: BrowserPage | undefined): Promise<void> {
  await first?.evaluate(() => (window.opa.scratch.popups as Window[] | undefined)?.forEach((p) => p.close())).catch(() => undefined);
}

/** The server's list requests (`GET /v1/subscriptions`: a pull's), from log position `from` on. */
function listRequests(server: RefServer, from = 0): RequestLogEntry[] {
  return server.log().slice(from).filter((e) => e.method === 'GET' && e.path === '/v1/subscriptions');
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
  describe('many visible tabs poll like one (issue 34)', () => {
    it('three visible tabs with pullInterval 1000: the server sees one tab’s list requests in 5 s, all from the leader', async () => {
      const context = await h.browser.newContext();
      let first: BrowserPage | undefined;
      try {
        first = await threeVisibleTabs(context, h.pages.url, clientOptions(h.server, uniqueDbName('tabs-poll'), { pullInterval: 1000 }));
        const tabs = await waitFor('exactly one of three tabs to lead', async () => {
          const states = await tabStates(first!);
          return states.filter((t) => t.leader).length === 1 ? states : undefined;
        });
        // Every tab visible: each one ticks every second and asks for a pull (a hidden one would not).
        expect(tabs.map((t) => t.visible)).toEqual([true, true, true]);

        // The window is the server's: 5 s of its arrival stamps from a pull's request on, counted once the
        // server has seen a request after it (so a loaded machine only makes the count smaller, never larger).
        const from = h.server.log().length;
        const start = (await waitFor('a pull once the three tabs are open', () => listRequests(h.server, from)[0]))!.at;
        await waitFor('a pull after the 5 s window', () => listRequests(h.server, from).some((e) => e.at > start + 5000), 30_000);
        const inWindow = listRequests(h.server, from).filter((e) => e.at <= start + 5000);
        // One tab makes 6 here (one at each end); three that each pull made 15 to 18. The bound leaves room
        // for one request delayed on its way while the next was not.
        expect(inWindow.length).toBeLessThanOrEqual(7);

        // Only the leader's worker talked to the server.
        const after = await tabStates(first);
        for (const t of after) {
          if (t.leader) expect(t.sent.filter((r) => r.startsWith('GET')).length).toBeGreaterThanOrEqual(inWindow.length);
          else expect(t.sent).toEqual([]);
        }
        expect(await pageErrors(first)).toEqual([]);
      } finally {
        await closeTabs(first);
        await context.close();
      }
    });

    it('focus and visibility in every tab right after a pull join the next pull instead of making their own', async () => {
      const context = await h.browser.newContext();
      let first: BrowserPage | undefined;
      try {
        // A long interval, so "the next pull" is far from the triggers in the server's log.
        first = await threeVisibleTabs(context, h.pages.url, clientOptions(h.server, uniqueDbName('tabs-focus'), { pullInterval: 10_000 }));
        const tabs = await waitFor('exactly one of three tabs to lead', async () => {
          const states = await tabStates(first!);
          return states.filter((t) => t.leader).length === 1 ? states : undefined;
        });
        expect(tabs.map((t) => t.visible)).toEqual([true, true, true]);

        // A pull the leader made on its own schedule, and finished.
        const from = h.server.log().length;
        const pull = (await waitFor('a pull once the three tabs are open', () => listRequests(h.server, from)[0], 30_000))!;
        await waitFor('that pull to finish', () =>
          first!.evaluate(async (at) => {
            for (const w of [window, ...(window.opa.scratch.popups as Window[])]) {
              const status = await w.opa.client.status();
              if (status.leader) return status.phase === 'idle' && (status.lastSuccess ?? 0) >= at;
            }
            return false;
          }, pull.at),
        );
        // Each tab is hidden and shown again, then focused, as a browser tells a tab coming to the front.
        await first.evaluate(() => {
          for (const w of [window, ...(window.opa.scratch.popups as Window[])]) {
            w.document.dispatchEvent(new Event('visibilitychange'));
            w.dispatchEvent(new Event('focus'));
          }
        });
        const triggered = Date.now();

        // Within 5 s of the pull by the server's stamps (the next is due 10 s after it), no list request: the six
        // triggers made up to six before.
        await waitFor('5 s of the server’s time after the pull', () => Date.now() > Math.max(triggered, pull.at + 5000) + 200, 30_000, 100);
        expect(listRequests(h.server, from).filter((e) => e.at > pull.at && e.at <= pull.at + 5000)).toEqual([]);
        // They joined the next one, which still comes.
        await waitFor('the next pull', () => listRequests(h.server, from).length > 1, 30_000);
        const after = await tabStates(first);
        for (const t of after) if (!t.leader) expect(t.sent).toEqual([]);
        expect(await pageErrors(first)).toEqual([]);
      } finally {
        await closeTabs(first);
        await context.close();
      }
    });
  });
});
