// A change the page's last copy carried as the page went away may have reached the server: the next open
// cannot know whether that copy left. In every engine, against the reference Open Podcast API server: a page
// unsubscribes a feed (its worker never pushes it: a long pushDelay), navigates away (the copy's keepalive PATCH
// reaches the server), and the next open takes the change back while its first pull is still on its way. The
// toggle back is sent, not folded away onto the copied change (issue 31: it was folded away, the server kept the
// copy's value, and the next pull showed it here too). And a follower tab's edit made while the leader's request
// for the same feed is in flight is sent after it, not folded back (the follower cannot see the leader's request:
// the change's stored delivery state says it may have arrived).
import { expect, it } from 'vitest';
import { clientOptions, forEachEngine, harnessPerFile, openPage, uniqueDbName, waitFor } from './support/harness.ts';

/** The bound for a copy sent as the page goes. */
const DELIVERED_WITHIN = 3000;

forEachEngine((engine) => {
  const h = harnessPerFile(engine, { seed: 4 });

  it('the next open takes back a change the page sent in its copy: the toggle back reaches the server', async () => {
    const context = await h.browser.newContext();
    // Closing a context's last tab ends WebKit's session: a blank tab keeps it.
    await context.newPage();
    const dbName = uniqueDbName('copy-fold-back');
    // The worker never pushes on its own: only the page's copy can carry the change.
    const options = clientOptions(h.server, dbName, { pushDelay: 600_000 });
    const page = await openPage(context, h.pages.url, options);
    await page.evaluate(() => window.opa.client.sync());
    const target = h.server.state().find((e) => e.is_subscribed)!;
    h.server.clearLog();
    await page.evaluate((guid) => window.opa.client.update(guid, { isSubscribed: false }), target.guid);
    expect(h.server.entry(target.guid)!.is_subscribed).toBe(true);
    // A navigation (Firefox's tab close may lose its keepalive request: docs/browser-support.md).
    await page.goto(`${h.pages.url}inert.html`);
    await waitFor("the copy's PATCH on the server", () => h.server.entry(target.guid)!.is_subscribed === false, DELIVERED_WITHIN, 25);
    await page.close();

    // The next open: its first pull answers slowly, and the app takes the change back meanwhile.
    h.server.setLatency(1500);
    const next = await openPage(context, h.pages.url, options);
    const view = await next.evaluate((guid) => window.opa.client.update(guid, { isSubscribed: true }), target.guid);
    expect(view).toMatchObject({ isSubscribed: true });
    h.server.setLatency(0);
    await next.evaluate(() => window.opa.client.sync());
    await waitFor('the toggle back on the server', () => h.server.entry(target.guid)!.is_subscribed === true, 5000, 25);
    const after = await next.evaluate(async (guid) => {
      await window.opa.client.sync();
      return { row: await window.opa.client.subscription(guid), pending: await window.opa.client.pending() };
    }, target.guid);
    expect(after.row).toMatchObject({ isSubscribed: true, pending: false });
    expect(after.pending).toEqual([]);
    await context.close();
  });

  it("a follower tab takes back a change while the leader's PATCH of it is in flight: the server ends with the follower's word", async () => {
    const context = await h.browser.newContext();
    const dbName = uniqueDbName('copy-follower');
    const options = clientOptions(h.server, dbName);
    const leader = await openPage(context, h.pages.url, options);
    await leader.evaluate(() => window.opa.client.sync());
    const follower = await openPage(context, h.pages.url, options);
    await waitFor('the second tab to follow', () => follower.evaluate(async () => !(await window.opa.client.status()).leader));
    expect(await leader.evaluate(async () => (await window.opa.client.status()).leader)).toBe(true);
    const target = h.server.state().find((e) => e.is_subscribed)!;
    h.server.clearLog();
    // The leader's PATCH is answered 1.5 s late: the follower's edit comes while it is on its way.
    h.server.setLatency(1500);
    await leader.evaluate((guid) => window.opa.client.update(guid, { isSubscribed: false }), target.guid);
    await waitFor('the PATCH in flight', () => h.server.log().some((e) => e.method === 'PATCH'), 5000, 10);
    await follower.evaluate((guid) => window.opa.client.update(guid, { isSubscribed: true }), target.guid);
    h.server.setLatency(0);
    await waitFor('both PATCHes on the server, the follower\'s last', () => h.server.log().filter((e) => e.method === 'PATCH' && e.status === 200).length === 2, 8000, 25);
    expect(h.server.entry(target.guid)!.is_subscribed).toBe(true);
    const after = await follower.evaluate(async (guid) => {
      await window.opa.client.sync();
      return { row: await window.opa.client.subscription(guid), pending: await window.opa.client.pending() };
    }, target.guid);
    expect(after.row).toMatchObject({ isSubscribed: true, pending: false });
    expect(after.pending).toEqual([]);
    await context.close();
  });
});
