// The service worker's push (opa-sync/sw) against what Chromium does to it, with every page closed: stopped in
// the middle of a push (CDP), a tab opened while it pushes, and what it leaves behind: no credential in any
// IndexedDB database of the origin, in Cache Storage or in its registration. The server holds an upload's
// answer (its latency) so the stop or the new tab lands while the upload is in flight.
import { describe, expect, it } from 'vitest';
import { startGpodderServer } from '../server/gpodder/server.ts';
import { startServer } from '../server/server.ts';
import { launchBrowser, selectedEngines } from '../support/browsers.ts';
import { clientOptions, goOffline, goOnline, openPage, perBlock, served, sleep, startPages, uniqueDbName, waitFor, type BrowserContext, type BrowserPage, type PageOptions } from './support/harness.ts';
import { controlServiceWorker, everythingStored, registerAppServiceWorker } from './support/service-worker.ts';

const FEED = 'https://feeds.example/background/in-flight.xml';
const GPODDER_FEED = 'https://feeds.example/background/gpodder-in-flight.xml';
const DEVICE = 'web-player';
/**
 * How long the server holds each answer while a test acts on the push in flight, ms. Twice this (the CORS
 * preflight is held too) stays under the service worker's 4 s silent-request limit: longer, every pull is given
 * up, and an add that was handed out waits for a pull that never completes.
 */
const HOLD = 1500;

describe.runIf(selectedEngines().includes('chromium'))('chromium', () => {
  const env = perBlock(
    async () => {
      const browser = await launchBrowser('chromium');
      const opa = await startServer({ port: 0, randomSeed: 0x5eed });
      const gpodder = await startGpodderServer({ port: 0, dialect: 'mygpo' });
      // The gPodder server behind the page's own origin, as a deployment without CORS puts it.
      const pages = await startPages({ '/api/2': gpodder.url });
      return { browser, opa, gpodder, pages };
    },
    async ({ browser, opa, gpodder, pages }) => {
      await browser.close();
      await pages.close();
      await opa.close();
      await gpodder.close();
    },
  );

  const opaOptions = (label: string): PageOptions => clientOptions(env().opa, uniqueDbName(label), { backgroundSync: true });
  const opaUploads = () => env().opa.log().filter((e) => e.method === 'POST' && e.path === '/v1/subscriptions');
  const onOpaServer = () => env().opa.state().filter((e) => e.feed_url === FEED);

  /**
   * A page with `backgroundSync: true` and the app's service worker adds `feed` while `unreachable()` holds: the
   * push fails, the tag is registered. Returns the page (still open).
   */
  async function leftBehind(context: BrowserContext, options: PageOptions, feed: string, unreachable: () => void): Promise<BrowserPage> {
    const page = await openPage(context, env().pages.url, options);
    await registerAppServiceWorker(page);
    // Measured: faulting the network right after activation sometimes closed the page under Playwright.
    await sleep(300);
    await page.evaluate(() => window.opa.client.sync());
    unreachable();
    await page.evaluate((f) => window.opa.client.add(f), feed);
    await waitFor('the tag registered after the failed push', async () => {
      const status = await page.evaluate(() => window.opa.client.status());
      return status.pending === 1 && status.backgroundSync === 'registered';
    }, 15_000);
    return page;
  }

  /** The OPA server answers again, every answer held for HOLD ms; `dropHeldUpload`: the first upload is then cut unapplied. */
  function holdAnswers(dropHeldUpload: boolean): void {
    const { opa } = env();
    opa.setLatency(HOLD);
    opa.clearFaults();
    opa.clearLog();
    if (dropHeldUpload) opa.dropNext(1, { method: 'POST', path: '/subscriptions' });
  }

  /**
   * A page adds FEED while the server drops everything and closes; the next sync event's upload is held, the
   * service worker stopped while it is, and the upload then applied (`applied`) or cut unapplied. `before` runs
   * on the reset server first.
   */
  async function stoppedMidPush(applied: boolean, before = () => {}) {
    const { browser, opa, pages } = env();
    opa.reset();
    before();
    const context = await browser.newContext();
    const options = opaOptions('bg-stopped');
    const page = await leftBehind(context, options, FEED, () => opa.dropNext(1_000_000));
    const sw = await controlServiceWorker(context, pages.url);
    await page.close();
    holdAnswers(!applied);
    await sw.fireSync();
    const held = await waitFor('the upload in flight, its answer held', () => opaUploads()[0], 20_000);
    const stops = sw.stops();
    await sw.stop();
    // Chromium may start it again at once (its own retry of the failed event): a stop is what counts.
    await waitFor('the service worker stopped', () => sw.stops() > stops);
    expect(held.status).toBe(0);
    await waitFor('the held upload settled on the server', () => held.status !== 0, HOLD + 5000);
    expect(held.fault).toBe(applied ? undefined : 'drop');
    opa.setLatency(0);
    return { context, options, sw, held };
  }

  for (const applied of [false, true]) {
    it(`stopped in the middle of a push (the held upload ${applied ? 'applied, its answer lost' : 'never applied'}): nothing lost, the next attempt finishes it, one copy on the server`, async () => {
      const { opa, pages } = env();
      const { context, options, sw, held } = await stoppedMidPush(applied);
      await sw.fireSync();
      // The next attempt pulls first (the add may have arrived). Applied, the server's word (the feed subscribed,
      // as asked) settles it with no upload again; cut unapplied, the add goes again.
      const since = () => opa.log().slice(opa.log().indexOf(held) + 1).filter((e) => e.method !== 'OPTIONS');
      await waitFor('the next attempt finished it', () => served(since().filter((e) => (applied ? e.method === 'GET' : e.method === 'POST'))).length > 0, 20_000);
      expect(since()[0]?.method).toBe('GET');
      // Settled: the service worker's run is over before the server is read.
      await sleep(500);
      expect(onOpaServer()).toHaveLength(1);
      expect(onOpaServer()[0]!.deleted).toBeUndefined();
      expect(opaUploads()).toHaveLength(applied ? 1 : 2);
      // The next open finds nothing waiting (it sends nothing) and the one subscription.
      const sent = opaUploads().length;
      const next = await openPage(context, pages.url, options);
      const status = await next.evaluate(() => window.opa.client.sync().then(() => window.opa.client.status()));
      expect(status.pending).toBe(0);
      const subscriptions = await next.evaluate(() => window.opa.client.subscriptions());
      expect(subscriptions.filter((s) => s.feedUrl === FEED)).toHaveLength(1);
      expect(opaUploads()).toHaveLength(sent);
      await context.close();
    });
  }

  it("the held upload applied, its answer lost, then another device unsubscribes the feed: the next attempt pulls first and does not upload it again (issue 26)", async () => {
    const { opa, pages } = env();
    // A feed already on the account: the page's first pull gets a cursor (the server's time) to judge stamps by.
    const { context, options, sw } = await stoppedMidPush(true, () => opa.foreign.add('https://feeds.example/background/other.xml'));
    opa.foreign.patch(onOpaServer()[0]!.guid, { is_subscribed: false });
    opa.clearLog();
    await sw.fireSync();
    await waitFor('the next attempt pulled', () => served(opa.log().filter((e) => e.method === 'GET')).length > 0, 20_000);
    const next = await openPage(context, pages.url, options);
    const status = await next.evaluate(() => window.opa.client.sync().then(() => window.opa.client.status()));
    expect(status.pending).toBe(0);
    expect(opaUploads()).toHaveLength(0);
    expect(onOpaServer()).toMatchObject([{ is_subscribed: false }]);
    const subscriptions = await next.evaluate(() => window.opa.client.subscriptions());
    expect(subscriptions.filter((s) => s.feedUrl === FEED)).toMatchObject([{ isSubscribed: false, pending: false }]);
    await context.close();
  });

  it('a change that needs no word from the server (a PATCH the page never sent, its copy lost at close): the event sends it with no pull before it (issue 31 item 5)', async () => {
    const { browser, opa, pages } = env();
    opa.reset();
    const { guid } = opa.foreign.add('https://feeds.example/background/patched.xml');
    const context = await browser.newContext();
    const page = await openPage(context, pages.url, opaOptions('bg-push-first'));
    await registerAppServiceWorker(page);
    await sleep(300);
    await page.evaluate(() => window.opa.client.sync());
    // Offline: the page's push never comes (the change is never handed out by it), and its last copy, sent as it
    // closes, is lost on the way.
    await goOffline(context, opa);
    await page.evaluate((g) => window.opa.client.update(g, { isSubscribed: false }), guid);
    const sw = await controlServiceWorker(context, pages.url);
    await page.close();
    await sleep(500);
    await goOnline(context, opa);
    opa.clearLog();
    await sw.fireSync();
    await waitFor('the PATCH answered', () => served(opa.log().filter((e) => e.method === 'PATCH')).length > 0, 20_000);
    // Settled: the event is over before the log is read.
    await sleep(500);
    expect(opa.log().filter((e) => e.method !== 'OPTIONS').map((e) => e.method)).toEqual(['PATCH']);
    expect(opa.entry(guid)).toMatchObject({ is_subscribed: false });
    await context.close();
  });

  it('a tab opened while the service worker pushes: one sender (the Web Lock), the change uploaded once', async () => {
    const { browser, opa, pages } = env();
    opa.reset();
    const context = await browser.newContext();
    const options = opaOptions('bg-tab');
    const page = await leftBehind(context, options, FEED, () => opa.dropNext(1_000_000));
    const sw = await controlServiceWorker(context, pages.url);
    await page.close();
    holdAnswers(false);
    await sw.fireSync();
    const held = await waitFor('the service worker\'s upload in flight, its answer held', () => opaUploads()[0], 20_000);
    const tab = await openPage(context, pages.url, options);
    // Opened while the service worker pushes, which leads.
    expect(held.status).toBe(0);
    expect((await tab.evaluate(() => window.opa.client.status())).leader).toBe(false);
    // The tab asks for a run while the service worker leads: the leader runs it.
    const synced = tab.evaluate(() => window.opa.client.sync().then(() => 'done', (e: unknown) => String(e)));
    await waitFor('the change on the server', () => onOpaServer().length > 0, 20_000);
    await waitFor('nothing waits in the tab', async () => (await tab.evaluate(() => window.opa.client.status())).pending === 0, 20_000);
    expect(await synced).toBe('done');
    opa.setLatency(0);
    await sleep(500);
    expect(opaUploads()).toHaveLength(1);
    expect(onOpaServer()).toHaveLength(1);
    await context.close();
  });

  it("a gPodder session (auth type 'session', the server behind the page's origin): one login with the password, then the cookie; the service worker, given no credentials, sends what a closed page left (issue 34)", async () => {
    const { browser, gpodder, pages } = env();
    gpodder.reset();
    const context = await browser.newContext();
    const origin = new URL(pages.url).origin;
    const options: PageOptions = {
      protocol: 'gpodder', baseUrl: origin, device: DEVICE, dbName: uniqueDbName('bg-session'), backgroundSync: true,
      auth: { type: 'session', username: 'alice', password: 'alice-password' }, pullInterval: 0, pushDelay: 20, retry: { baseDelay: 100, maxDelay: 500 },
    };
    const page = await leftBehind(context, options, GPODDER_FEED, () => gpodder.failNext(1_000_000, 503));
    const withPassword = gpodder.log().filter((e) => e.authPresent).map((e) => e.path);
    expect(withPassword).toEqual(['/api/2/auth/alice/login.json']);
    const sw = await controlServiceWorker(context, pages.url);
    await page.close();
    gpodder.clearFaults();
    gpodder.clearLog();
    await sw.fireSync();
    await waitFor('the change on the server, sent by the service worker with the cookie', () => gpodder.subscribed({ device: DEVICE }).includes(GPODDER_FEED), 20_000);
    expect(gpodder.log().length).toBeGreaterThan(0);
    expect(gpodder.log().filter((e) => e.authPresent)).toEqual([]);
    await context.close();
  });

  it('no credential in any IndexedDB database of the origin, Cache Storage or the service worker\'s registration (a bearer token and a gPodder password)', async () => {
    const { browser, opa, gpodder, pages } = env();
    opa.reset();
    gpodder.reset();
    gpodder.registerDevice(DEVICE);
    const context = await browser.newContext();
    const origin = new URL(pages.url).origin;
    const gpodderOptions: PageOptions = {
      protocol: 'gpodder', baseUrl: origin, device: DEVICE, dbName: uniqueDbName('bg-gpodder'), backgroundSync: true,
      auth: { type: 'basic', username: 'alice', password: 'alice-password' }, pullInterval: 0, pushDelay: 20, retry: { baseDelay: 100, maxDelay: 500 },
    };
    const opaPage = await leftBehind(context, opaOptions('bg-credentials'), FEED, () => opa.dropNext(1_000_000));
    const gpodderPage = await leftBehind(context, gpodderOptions, GPODDER_FEED, () => gpodder.failNext(1_000_000, 503));
    const sw = await controlServiceWorker(context, pages.url);
    await opaPage.close();
    await gpodderPage.close();
    opa.clearFaults();
    gpodder.clearFaults();
    await sw.fireSync();
    await waitFor('both changes on their servers, sent by the service worker', () => onOpaServer().length > 0 && gpodder.subscribed({ device: DEVICE }).includes(GPODDER_FEED), 20_000);
    await sleep(500);
    await sw.blank.goto(`${pages.url}inert.html`);
    const stored = await everythingStored(sw.blank);
    const registration = await sw.blank.evaluate(async () => {
      const r = await navigator.serviceWorker.getRegistration('/');
      const sync = (r as unknown as { sync?: { getTags(): Promise<string[]> } } | undefined)?.sync;
      return JSON.stringify({ scope: r?.scope, scripts: [r?.active?.scriptURL, r?.waiting?.scriptURL, r?.installing?.scriptURL], tags: await sync?.getTags() });
    });
    const seenByCdp = JSON.stringify({ scope: sw.scopeURL, versions: sw.versions() });
    // What was read: both stores, and the service worker's registry of them.
    expect(stored).toContain(FEED);
    expect(stored).toContain(GPODDER_FEED);
    expect(stored).toContain('opa-sync-background');
    expect(stored).toContain(gpodderOptions.dbName);
    expect(registration).toContain('background-sw.ts');
    expect(seenByCdp).toContain('background-sw.ts');
    const secrets = ['demo-token', 'alice-password', Buffer.from('alice:alice-password').toString('base64')];
    for (const text of [stored, registration, seenByCdp]) {
      for (const secret of secrets) expect(text).not.toContain(secret);
    }
    await context.close();
  });
});
