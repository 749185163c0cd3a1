// The demo page, driven through its UI in every engine against the reference server (both started by
// demo/start.ts, afresh per engine), with what the page shows checked against what the server holds.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeEach, describe, expect, test } from 'vitest';
import { startDemo, startGpodderDemo, type Demo } from '../../demo/start.ts';
import { launchBrowser, type Browser, type BrowserPage, type EngineName } from '../support/browsers.ts';
import { forEachEngine, perBlock, sleep, waitFor } from './support/harness.ts';
import { ui, type Ui } from './support/ui.ts';

const NEW_FEED = 'https://demo-test.example/podcast/feed.xml';
const MOVED_FEED = 'https://moved.example/podcast/feed.xml';
const WAIT = { timeout: 15_000, interval: 100 };

/** Where the screenshots go: the README's picture is Chromium's, refreshed on purpose (UPDATE_DOCS=1 npm test). */
function screenshots(engine: EngineName): { page: string; phone: string } {
  const results = (name: string) => fileURLToPath(new URL(`../../test-results/${name}`, import.meta.url));
  const suffix = engine === 'chromium' ? '' : `-${engine}`;
  return {
    page: engine === 'chromium' && process.env.UPDATE_DOCS === '1' ? fileURLToPath(new URL('../../docs/demo.png', import.meta.url)) : results(`demo${suffix}.png`),
    phone: results(`demo-phone${suffix}.png`),
  };
}

const row = (guid: string): string => `#sub-list > li[data-guid="${guid}"]`;
const ROWS = '#sub-list > li';
const toggle = (guid: string): string => `${row(guid)} [role="switch"]`;

/** A page on the demo, ready; `sameLoad()` says whether it is still the load it was opened with (no reload nobody asked for). */
async function openDemo(browser: Browser, demo: { url: string }, width: number, height: number): Promise<{ page: BrowserPage; ui: Ui; sameLoad: () => Promise<boolean> }> {
  const context = await browser.newContext();
  const page = await context.newPage({ width, height });
  await page.goto(demo.url);
  await waitFor('the demo page to be ready', () => page.evaluate(() => document.body.dataset.ready === 'true'), 30_000);
  await page.evaluate(() => void ((window as unknown as { __testLoad: boolean }).__testLoad = true));
  return {
    page: Object.assign(page, { close: () => context.close() }),
    ui: ui(page),
    sameLoad: () => page.evaluate(() => (window as unknown as { __testLoad?: boolean }).__testLoad === true),
  };
}

forEachEngine((engine) => {
  describe('the demo page', () => {
    const started = perBlock(
      async () => {
        const browser = await launchBrowser(engine);
        try {
          return { browser, demo: await startDemo({ serverPort: 0, vitePort: 0, logLevel: 'silent', watch: false }) };
        } catch (error) {
          await browser.close();
          throw error;
        }
      },
      async ({ browser, demo }) => {
        await browser.close();
        await demo.close();
      },
    );
    let demo: Demo;
    let browser: Browser;
    const shots = screenshots(engine);

    beforeEach(() => {
      ({ browser, demo } = started());
    });

    const logLines = (u: Ui, kind: string): Promise<string[]> => u.texts(`#log-list > li[data-kind="${kind}"] .log-text`);
    const serverLog = (method: string, guid: string) => demo.server.log().filter((e) => e.method === method && e.path.endsWith(`/${guid}`));

    async function troubleFail(u: Ui, count: number, status: string, method: string, retryAfter = ''): Promise<void> {
      await u.fill('#fail-count', String(count));
      await u.select('#fail-method', method);
      await u.select('#fail-status', status);
      if (await u.enabled('#fail-retry-after')) await u.fill('#fail-retry-after', retryAfter);
      await u.click('#fail-form button[type="submit"]');
      const what = `the next ${count} ${method} request${count === 1 ? '' : 's'} will get ${status}`;
      await expect.poll(() => logLines(u, 'server'), WAIT).toContainEqual(expect.stringContaining(what));
    }

    /** The first `n` seeded subscriptions that are subscribed on the server, by their guid. */
    function subscribedGuids(n: number): string[] {
      return demo.server
        .state()
        .filter((e) => e.is_subscribed && !e.deleted)
        .slice(0, n)
        .map((e) => e.guid);
    }

    test('connects, edits offline-first, shows failures and retries, and fits a phone', async () => {
      const { page, ui: u, sameLoad } = await openDemo(browser, demo, 1280, 900);

      // Defaults come from startDemo: this run's server, not a hard-coded port.
      expect(await u.value('#base-url')).toBe(demo.serverUrl);
      expect(await u.value('#token')).toBe(demo.token);
      expect(await u.visible('#trouble')).toBe(false);
      await u.fill('#page-size', '40');
      await u.click('#connect');

      await expect.poll(() => u.text('#sub-count'), WAIT).toBe('200');
      await expect.poll(() => u.count(ROWS), WAIT).toBe(100); // capped, with "Show more"
      expect(await u.visible('#show-more')).toBe(true);
      await expect.poll(() => u.text('#st-phase'), WAIT).toBe('idle');
      expect(await u.text('#st-leader')).toBe('yes (this tab syncs)');
      expect(demo.server.log().some((e) => e.method === 'GET' && e.query.per_page === '40')).toBe(true);
      await expect.poll(() => u.visible('#trouble'), WAIT).toBe(true);

      // Listening state over the Open Podcast API: the episodes panel says it is not available (the methods reject with unsupported).
      const [firstRow] = await u.dataset(ROWS, 'guid');
      await u.click(() => u.button(row(firstRow!), /^Episodes of /));
      await expect.poll(() => u.attr('#episodes-note', 'data-unsupported'), WAIT).toBe('true');
      expect(await u.text('#episodes-note')).toContain('not available for this protocol');
      expect(await u.count('#episode-list > li')).toBe(0);
      await u.click('#episodes-close');

      const [toggled, retried, refused, deleted] = subscribedGuids(4);

      // Toggle with added latency: the pending badge shows while the PATCH is on its way, then clears.
      await u.fill('#latency-ms', '700');
      await u.click('#latency-form button');
      await expect.poll(() => logLines(u, 'server'), WAIT).toContainEqual(expect.stringContaining('waits 700 ms'));
      await u.fill('#search', toggled);
      await expect.poll(() => u.count(ROWS), WAIT).toBe(1);
      await u.click(toggle(toggled));
      await expect.poll(() => u.count(`${row(toggled)} .badge-pending`), WAIT).toBe(1);
      // The queue panel re-reads on its own schedule (coalesced), a moment after the row.
      await expect.poll(() => u.text(`#pending-list > li[data-guid="${toggled}"]`).then((t) => t ?? ''), WAIT).toContain('unsubscribe');
      await expect.poll(() => u.count(`${row(toggled)} .badge-pending`), WAIT).toBe(0);
      expect(demo.server.entry(toggled)?.is_subscribed).toBe(false);
      expect(await u.attr(row(toggled), 'data-subscribed')).toBe('false');
      await u.fill('#latency-ms', '0');
      await u.click('#latency-form button');

      // Change its feed URL and guid in the row's edit form: the server moves it, the old guid chains to the new.
      const movedGuid = `${toggled}-moved`;
      await u.click(() => u.button(row(toggled), /^Edit /));
      const edit = '#sub-list form.sub-edit';
      await u.fill(() => u.labelled(edit, 'Feed URL'), MOVED_FEED);
      await u.fill(() => u.labelled(edit, 'Guid'), movedGuid);
      await u.click(() => u.button(edit, 'Save'));
      await expect.poll(() => u.text(`${row(movedGuid)} .sub-feed`), WAIT).toBe(MOVED_FEED);
      await expect.poll(() => demo.server.entry(movedGuid)?.feed_url, WAIT).toBe(MOVED_FEED);
      expect(demo.server.entry(toggled)?.guid).toBe(movedGuid);
      await expect.poll(() => u.count(`${row(movedGuid)} .badge-pending`), WAIT).toBe(0);
      expect(await u.count(row(toggled))).toBe(0);

      // Subscribe to a new feed; it shows at once and reaches the server.
      await u.fill('#search', '');
      await u.fill('#add-url', NEW_FEED);
      await u.click('#add-form button[type="submit"]');
      await expect.poll(() => u.text('#sub-count'), WAIT).toBe('201');
      await expect.poll(() => demo.server.state().some((e) => e.feed_url === NEW_FEED), WAIT).toBe(true);

      // Search: by feed URL and by guid, then back to the capped list.
      await u.fill('#search', 'DEMO-TEST.example');
      await expect.poll(() => u.texts(ROWS), WAIT).toEqual([expect.stringContaining(NEW_FEED)]);
      expect(await u.attr('#list-summary', 'data-matches')).toBe('1');
      await expect.poll(() => u.count(`${ROWS} .badge-pending`), WAIT).toBe(0);
      await u.fill('#search', retried.slice(0, 13));
      await expect.poll(() => u.dataset(ROWS, 'guid'), WAIT).toEqual([retried]);

      // Transient failures: the next two PATCHes get 503; the change is retried with backoff until it lands.
      await troubleFail(u, 2, '503', 'PATCH');
      await u.click(toggle(retried));
      await expect.poll(() => logLines(u, 'error'), WAIT).toContainEqual(expect.stringMatching(/^server 503: PATCH /));
      await expect.poll(() => serverLog('PATCH', retried).map((e) => e.status), WAIT).toEqual([503, 503, 200]);
      await expect.poll(() => u.count(`${row(retried)} .badge-pending`), WAIT).toBe(0);
      expect(demo.server.entry(retried)?.is_subscribed).toBe(false);

      // A failed pull shows up with its code; the next Sync now succeeds.
      await troubleFail(u, 1, '503', 'GET');
      await u.click('#sync-now');
      await expect.poll(() => logLines(u, 'error'), WAIT).toContainEqual(expect.stringMatching(/^sync now failed: server 503/));
      await expect.poll(() => u.enabled('#sync-now'), WAIT).toBe(true);
      await u.click('#sync-now');
      await expect.poll(() => logLines(u, 'sync'), WAIT).toContainEqual(expect.stringMatching(/^sync now: pulled \d+ · pushed \d+/));

      // A refusal (404) lands under "Refused" with its reason; Retry sends it again.
      await troubleFail(u, 1, '404', 'PATCH');
      await u.fill('#search', refused);
      await expect.poll(() => u.count(ROWS), WAIT).toBe(1);
      await u.click(toggle(refused));
      const refusedItem = `#failed-list > li[data-guid="${refused}"]`;
      await expect.poll(() => u.text(refusedItem), WAIT).toContain('not-found 404');
      await expect.poll(() => u.count(`${row(refused)} .badge-failed`), WAIT).toBe(1);
      expect(await u.text('#st-failed')).toBe('1');
      expect(demo.server.entry(refused)?.is_subscribed).toBe(true);
      await u.click(() => u.button(refusedItem, 'Retry'));
      await expect.poll(() => demo.server.entry(refused)?.is_subscribed, WAIT).toBe(false);
      await expect.poll(() => u.count('#failed-list > li.change'), WAIT).toBe(0);

      // Delete with slow deletion jobs: the pending remove shows its deletion id; ask the server about it.
      // Long enough that the job is still pending when the check is clicked, even in a slow engine on a loaded
      // machine (6 s was not: the job ended, and its row left the queue, before the check in one full run).
      await u.fill('#jobs-delay', '20000');
      await u.click('#jobs-form button[type="submit"]');
      await expect.poll(() => logLines(u, 'server'), WAIT).toContainEqual(expect.stringContaining('PENDING 20000 ms'));
      await u.fill('#search', deleted);
      await expect.poll(() => u.count(ROWS), WAIT).toBe(1);
      await u.click(() => u.button(row(deleted), /^Delete /));
      const job = `#pending-list > li[data-guid="${deleted}"][data-kind="remove"] .deletion-result`;
      await expect.poll(() => u.count(job), WAIT).toBe(1);
      const deletionId = Number(await u.attr(job, 'data-deletion-id'));
      expect(Number.isInteger(deletionId)).toBe(true);
      await u.click(() => u.button(`#pending-list > li[data-guid="${deleted}"]`, /^Check deletion/));
      await expect.poll(() => logLines(u, 'sync'), WAIT).toContainEqual(expect.stringMatching(new RegExp(`^deletion #${deletionId}: PENDING`)));
      // The job ends 20 s after the delete; the engine's next poll of it then clears the queue.
      await expect.poll(() => u.count('#pending-list > li.change'), { ...WAIT, timeout: 45_000 }).toBe(0);
      expect(demo.server.entry(deleted)?.deleted).toBeTruthy();
      await u.fill('#deletion-id', String(deletionId));
      await u.click('#deletion-form button[type="submit"]');
      await expect.poll(() => u.text('#deletion-result'), WAIT).toMatch(new RegExp(`^#${deletionId}: SUCCESS`));
      await expect.poll(() => u.count(ROWS), WAIT).toBe(0); // deleted rows are hidden...
      await u.check('#show-deleted', true);
      await expect.poll(() => u.count(`${row(deleted)} .badge-deleted`), WAIT).toBe(1); // ...unless asked for
      await u.check('#show-deleted', false);

      // Another device unsubscribes/subscribes one on the server; the pull after it brings the change here.
      await u.fill('#search', '');
      await u.click('#foreign-toggle');
      await expect.poll(() => logLines(u, 'sync'), WAIT).toContainEqual(expect.stringMatching(/^pull after the other device: pulled [1-9]/));
      const foreignLine = (await logLines(u, 'server')).find((l) => l.startsWith('another device'))!;
      const foreignGuid = /\(([^)]+)\)$/.exec(foreignLine)![1]!;
      await u.fill('#search', foreignGuid);
      await expect.poll(() => u.attr(row(foreignGuid), 'data-subscribed'), WAIT).toBe(String(demo.server.entry(foreignGuid)?.is_subscribed));
      await u.fill('#search', '');
      await expect.poll(() => u.count(ROWS), WAIT).toBe(100);

      // The screenshot in docs/: history in the log, and one change retrying after a 503, slowed by latency.
      await u.fill('#latency-ms', '1500');
      await u.click('#latency-form button');
      await troubleFail(u, 1, '503', 'PATCH');
      const touched = new Set([movedGuid, retried, refused, deleted, foreignGuid]);
      const firstRows = (await u.dataset(ROWS, 'guid')).slice(0, 6);
      const waiting = firstRows.find((g) => !touched.has(g) && demo.server.entry(g)?.is_subscribed)!;
      expect(waiting).toBeDefined();
      await u.click(toggle(waiting));
      await expect.poll(() => u.count(`${row(waiting)} .badge-pending`), WAIT).toBe(1);
      const waitingItem = `#pending-list > li[data-guid="${waiting}"]`;
      await expect.poll(() => u.text(`${waitingItem} .change-error`).then((t) => t ?? ''), WAIT).toMatch(/^retrying after server 503/);
      await page.evaluate(() => {
        (document.activeElement as HTMLElement | null)?.blur();
        window.scrollTo(0, 0);
      });
      mkdirSync(dirname(shots.page), { recursive: true });
      await page.screenshot(shots.page);
      await u.fill('#latency-ms', '0');
      await u.click('#latency-form button');
      await expect.poll(() => u.count(`${row(waiting)} .badge-pending`), WAIT).toBe(0);
      expect(serverLog('PATCH', waiting).map((e) => e.status)).toEqual([503, 200]);

      // Remembered across reloads: the page size typed before connecting, and the connection itself.
      expect(await sameLoad()).toBe(true);
      await page.reload();
      await waitFor('the demo page to be ready again', () => page.evaluate(() => document.body.dataset.ready === 'true'), 30_000);
      await page.evaluate(() => void ((window as unknown as { __testLoad: boolean }).__testLoad = true));
      expect(await u.value('#page-size')).toBe('40');
      await expect.poll(() => u.text('#sub-count'), WAIT).toBe('200');
      await expect.poll(() => u.text('#st-phase'), WAIT).toBe('idle');

      // Disconnect closes the client: no list, no controls, no more requests.
      await u.click('#disconnect');
      await expect.poll(() => u.text('#phase-pill'), WAIT).toBe('disconnected');
      expect(await u.text('#sub-count')).toBe('—');
      expect(await u.count(ROWS)).toBe(0);
      expect(await u.visible('#trouble')).toBe(false);
      const requestsAtClose = demo.server.log().length;
      await sleep(300);
      expect(demo.server.log().length).toBe(requestsAtClose);

      // Clear local data, then a slow pull: the progress bar shows pages and entries of the total.
      await u.click('#connect');
      await expect.poll(() => u.text('#sub-count'), WAIT).toBe('200');
      await u.click('#clear-local');
      await expect.poll(() => u.text('#sub-count'), WAIT).toBe('0');
      await u.fill('#latency-ms', '400');
      await u.click('#latency-form button');
      await expect.poll(() => logLines(u, 'server'), WAIT).toContainEqual(expect.stringContaining('waits 400 ms'));
      await u.click('#sync-now');
      await expect.poll(() => u.visible('#pull-progress'), WAIT).toBe(true);
      await expect.poll(() => u.text('#pull-text'), WAIT).toMatch(/^page [1-4] · \d+ of 200 entries$/);
      await expect.poll(() => u.visible('#pull-progress'), WAIT).toBe(false);
      await expect.poll(() => u.text('#sub-count'), WAIT).toBe('200');
      await u.fill('#latency-ms', '0');
      await u.click('#latency-form button');

      expect(await page.errors()).toEqual([]);
      expect(await sameLoad()).toBe(true);
      await page.close();

      // Phone width: one column, nothing wider than the screen.
      const phone = await openDemo(browser, demo, 390, 844);
      // A phone-sized viewport: 390 px where the engine can; MiniBrowser's window has a minimum width (its toolbar),
      // 447 px, so WebKit's check runs at that width. Below 500 px the page must be one column either way.
      const width = await phone.page.evaluate(() => document.documentElement.clientWidth);
      expect(width).toBeLessThan(500);
      await phone.ui.click('#connect');
      await expect.poll(() => phone.ui.text('#sub-count'), WAIT).toBe('200');
      await expect.poll(() => phone.ui.count(ROWS), WAIT).toBe(100);
      const overflow = await phone.page.evaluate(() => ({
        scroll: document.documentElement.scrollWidth,
        client: document.documentElement.clientWidth,
        widest: Math.max(...[...document.querySelectorAll('.card, .sub, .top')].map((el) => el.getBoundingClientRect().right)),
      }));
      expect(overflow.scroll).toBeLessThanOrEqual(overflow.client);
      expect(overflow.widest).toBeLessThanOrEqual(width);
      const cards = await phone.page.evaluate(() =>
        ['#connection', '#status', '#subscriptions', '#outbox', '#log'].map((id) => {
          const r = document.querySelector(id)!.getBoundingClientRect();
          return { left: Math.round(r.left), right: Math.round(r.right), top: r.top };
        }),
      );
      // Stacked in one column, each card the full width, in this order.
      expect(new Set(cards.map((c) => `${c.left}-${c.right}`)).size).toBe(1);
      expect(cards.map((c) => c.top)).toEqual([...cards.map((c) => c.top)].sort((a, b) => a - b));
      mkdirSync(dirname(shots.phone), { recursive: true });
      await phone.page.screenshot(shots.phone);
      expect(await phone.page.errors()).toEqual([]);
      await phone.page.close();
    }, 180_000);
  });

  describe('the gPodder demo page', () => {
    const started = perBlock(
      async () => {
        const browser = await launchBrowser(engine);
        try {
          return { browser, demo: await startGpodderDemo('gpodder', { serverPort: 0, vitePort: 0, logLevel: 'silent', watch: false }) };
        } catch (error) {
          await browser.close();
          throw error;
        }
      },
      async ({ browser, demo }) => {
        await browser.close();
        await demo.close();
      },
    );

    test('episodes: play and seek store a position that is uploaded; another device’s shows after a sync', async () => {
      const { browser, demo } = started();
      const { page, ui: u, sameLoad } = await openDemo(browser, demo, 1280, 900);
      expect(await u.value('#protocol')).toBe('gpodder');
      await u.click('#connect');
      await expect.poll(() => u.text('#sub-count'), WAIT).toBe('200');
      await expect.poll(() => u.text('#st-phase'), WAIT).toBe('idle');

      // A subscription's episodes: the reference server's made-up feed, none with a listening state yet.
      const feed = demo.server.subscribed()[0]!;
      const [episode] = demo.server.feedEpisodes(feed);
      const ep = `#episode-list > li[data-episode="${episode!.url}"]`;
      const title = episode!.title;
      await u.fill('#search', feed);
      // Wait for the (debounced) search to apply: the list shrinking later would move the panel below it mid-click.
      await expect.poll(() => u.attr('#list-summary', 'data-matches'), WAIT).toBe(String(demo.server.subscribed().filter((f) => f.includes(feed)).length));
      await u.click(() => u.button('#sub-list', `Episodes of ${feed}`));
      await expect.poll(() => u.text('#episodes-feed'), WAIT).toBe(feed);
      await expect.poll(() => u.text('#episodes-note'), WAIT).toMatch(/^Episodes from the local reference server/);
      await expect.poll(() => u.count('#episode-list > li'), WAIT).toBe(demo.server.feedEpisodes(feed).length);
      expect(await u.text(`${ep} .ep-title`)).toBe(title);
      expect(await u.attr(ep, 'data-position')).toBe('');
      const position = async () => Number(await u.attr(ep, 'data-position'));

      // Play: the simulated player calls setProgress every second; pause; seek forward 30 s. The row shows what
      // the engine stored (it re-reads on the change events), pending until a sync uploads it.
      await u.click(() => u.button(ep, `Play ${title}`));
      await expect.poll(position, WAIT).toBeGreaterThanOrEqual(2);
      await u.click(() => u.button(ep, `Pause ${title}`));
      await expect.poll(() => u.attr(ep, 'data-playing'), WAIT).toBe('false');
      await u.click(() => u.button(ep, `Forward 30 s in ${title}`));
      await expect.poll(position, WAIT).toBeGreaterThanOrEqual(32);
      await expect.poll(() => u.attr(ep, 'data-pending'), WAIT).toBe('true');
      await expect.poll(() => u.text('#st-pending-episodes'), WAIT).toBe('1');
      await u.click('#sync-now');
      await expect.poll(() => u.attr(ep, 'data-pending'), WAIT).toBe('false');
      await expect.poll(() => u.text('#st-pending-episodes'), WAIT).toBe('0');
      const mine = await position();
      const uploaded = demo.server.episodeLog().filter((a) => a.episode === episode!.url && a.device === 'opa-sync');
      expect(uploaded.at(-1)).toMatchObject({ action: 'play', position: mine, total: episode!.duration });

      // Another device (the phone) plays it elsewhere, stamped now; the next sync brings its position here.
      await u.click(() => u.button(ep, `Another device plays ${title}`));
      await expect.poll(() => u.texts('#log-list > li[data-kind="server"] .log-text'), WAIT).toContainEqual(expect.stringContaining('another device (phone) played'));
      const theirs = demo.server.episodeLog().filter((a) => a.episode === episode!.url && a.device === 'phone');
      expect(theirs).toHaveLength(1);
      const other = theirs[0]!.position!;
      expect(other).not.toBe(mine);
      await u.click('#sync-now');
      await expect.poll(position, WAIT).toBe(other);
      expect(await u.attr(ep, 'data-pending')).toBe('false');

      // "Simulate trouble → Another device" speaks the gPodder server's own upload here (not OPA's edits).
      await u.fill('#search', '');
      await u.click('#foreign-add');
      await expect.poll(() => u.texts('#log-list > li[data-kind="server"] .log-text'), WAIT).toContainEqual(expect.stringMatching(/^another device subscribed to https:\/\/another-device-/));
      expect(demo.server.subscribed()).toHaveLength(201);
      await expect.poll(() => u.text('#sub-count'), WAIT).toBe('201');

      expect(await page.errors()).toEqual([]);
      expect(await sameLoad()).toBe(true);

      // Leaving: a position still waiting out the progress interval goes with the page itself (a keepalive send
      // as it unloads), and the reloaded page's log says so.
      await u.click(() => u.button(ep, `Forward 30 s in ${title}`));
      await expect.poll(() => u.attr(ep, 'data-pending'), WAIT).toBe('true');
      const waiting = await position();
      await page.reload();
      await expect
        .poll(() => u.texts('#log-list > li[data-kind="sync"] .log-text'), WAIT)
        .toContainEqual(expect.stringMatching(/^last chance at .+: the page sent \d+ requests? \(\d+ bytes\) with keepalive on pagehide$/));
      await expect.poll(() => demo.server.episodeLog().filter((a) => a.episode === episode!.url && a.device === 'opa-sync').at(-1)?.position, WAIT).toBe(waiting);
      await page.close();
    }, 120_000);
  });
});
