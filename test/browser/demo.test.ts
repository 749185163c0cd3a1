// The demo page, driven through its UI in Chromium against the reference server (both started by
// demo/start.ts), with what the page shows checked against what the server holds.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startDemo, type Demo } from '../../demo/start.ts';
import { launchChromium } from '../support/chromium.ts';

// The README's picture is refreshed on purpose (UPDATE_DOCS=1 npm test); otherwise a run leaves the tree clean.
const SCREENSHOT = fileURLToPath(
  new URL(process.env.UPDATE_DOCS === '1' ? '../../docs/demo.png' : '../../test-results/demo.png', import.meta.url),
);
const PHONE_SHOT = fileURLToPath(new URL('../../test-results/demo-phone.png', import.meta.url));
const NEW_FEED = 'https://demo-test.example/podcast/feed.xml';
const MOVED_FEED = 'https://moved.example/podcast/feed.xml';
const WAIT = { timeout: 15_000, interval: 100 };

let demo: Demo;
let browser: Browser;

beforeAll(async () => {
  demo = await startDemo({ serverPort: 0, vitePort: 0, logLevel: 'silent', watch: false });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await demo?.close();
});

const row = (page: Page, guid: string): Locator => page.locator(`#sub-list > li[data-guid="${guid}"]`);
const rows = (page: Page): Locator => page.locator('#sub-list > li');
const logLines = (page: Page, kind: string): Promise<string[]> => page.locator(`#log-list > li[data-kind="${kind}"] .log-text`).allTextContents();
const serverLog = (method: string, guid: string) => demo.server.log().filter((e) => e.method === method && e.path.endsWith(`/${guid}`));

/** A page on the demo; `loads` counts its page loads (a reload nobody asked for would lose the UI state). */
async function openPage(width: number, height: number): Promise<{ page: Page; errors: string[]; loads: () => number }> {
  const page = await browser.newPage({ viewport: { width, height } });
  const errors: string[] = [];
  let loads = 0;
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('load', () => loads++);
  await page.goto(demo.url);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
  return { page, errors, loads: () => loads };
}

async function troubleFail(page: Page, count: number, status: string, method: string, retryAfter = ''): Promise<void> {
  await page.fill('#fail-count', String(count));
  await page.selectOption('#fail-method', method);
  await page.selectOption('#fail-status', status);
  if (await page.isEnabled('#fail-retry-after')) await page.fill('#fail-retry-after', retryAfter);
  await page.click('#fail-form button[type="submit"]');
  const what = `the next ${count} ${method} request${count === 1 ? '' : 's'} will get ${status}`;
  await expect.poll(() => logLines(page, 'server'), WAIT).toContainEqual(expect.stringContaining(what));
}

/** The first `n` seeded subscriptions that are subscribed on the server, by their guid. */
function subscribedGuids(n: number): string[] {
  return demo.server
    .state()
    .filter((e) => e.is_subscribed && !e.deleted)
    .slice(0, n)
    .map((e) => e.guid);
}

test('the demo page connects, edits offline-first, shows failures and retries, and fits a phone', async () => {
  const { page, errors, loads } = await openPage(1280, 900);

  // Defaults come from startDemo: this run's server, not a hard-coded port.
  expect(await page.inputValue('#base-url')).toBe(demo.serverUrl);
  expect(await page.inputValue('#token')).toBe(demo.token);
  expect(await page.isHidden('#trouble')).toBe(true);
  await page.fill('#page-size', '40');
  await page.click('#connect');

  await expect.poll(() => page.textContent('#sub-count'), WAIT).toBe('200');
  await expect.poll(() => rows(page).count(), WAIT).toBe(100); // capped, with "Show more"
  expect(await page.isVisible('#show-more')).toBe(true);
  await expect.poll(() => page.textContent('#st-phase'), WAIT).toBe('idle');
  expect(await page.textContent('#st-leader')).toBe('yes (this tab syncs)');
  expect(demo.server.log().some((e) => e.method === 'GET' && e.query.per_page === '40')).toBe(true);
  await expect.poll(() => page.isVisible('#trouble'), WAIT).toBe(true);

  const [toggled, retried, refused, deleted] = subscribedGuids(4);

  // Toggle with added latency: the pending badge shows while the PATCH is on its way, then clears.
  await page.fill('#latency-ms', '700');
  await page.click('#latency-form button');
  await expect.poll(() => logLines(page, 'server'), WAIT).toContainEqual(expect.stringContaining('waits 700 ms'));
  await page.fill('#search', toggled);
  await expect.poll(() => rows(page).count(), WAIT).toBe(1);
  await row(page, toggled).getByRole('switch').click();
  await expect.poll(() => row(page, toggled).locator('.badge-pending').count(), WAIT).toBe(1);
  expect(await page.locator(`#pending-list > li[data-guid="${toggled}"]`).textContent()).toContain('unsubscribe');
  await expect.poll(() => row(page, toggled).locator('.badge-pending').count(), WAIT).toBe(0);
  expect(demo.server.entry(toggled)?.is_subscribed).toBe(false);
  expect(await row(page, toggled).getAttribute('data-subscribed')).toBe('false');
  await page.fill('#latency-ms', '0');
  await page.click('#latency-form button');

  // Change its feed URL and guid in the row's edit form: the server moves it, the old guid chains to the new.
  const movedGuid = `${toggled}-moved`;
  await row(page, toggled).getByRole('button', { name: /^Edit / }).click();
  const edit = page.locator('#sub-list form.sub-edit');
  await edit.getByLabel('Feed URL').fill(MOVED_FEED);
  await edit.getByLabel('Guid').fill(movedGuid);
  await edit.getByRole('button', { name: 'Save' }).click();
  await expect.poll(() => row(page, movedGuid).locator('.sub-feed').textContent(), WAIT).toBe(MOVED_FEED);
  await expect.poll(() => demo.server.entry(movedGuid)?.feed_url, WAIT).toBe(MOVED_FEED);
  expect(demo.server.entry(toggled)?.guid).toBe(movedGuid);
  await expect.poll(() => row(page, movedGuid).locator('.badge-pending').count(), WAIT).toBe(0);
  expect(await row(page, toggled).count()).toBe(0);

  // Subscribe to a new feed; it shows at once and reaches the server.
  await page.fill('#search', '');
  await page.fill('#add-url', NEW_FEED);
  await page.click('#add-form button[type="submit"]');
  await expect.poll(() => page.textContent('#sub-count'), WAIT).toBe('201');
  await expect.poll(() => demo.server.state().some((e) => e.feed_url === NEW_FEED), WAIT).toBe(true);

  // Search: by feed URL and by guid, then back to the capped list.
  await page.fill('#search', 'DEMO-TEST.example');
  await expect.poll(() => rows(page).allTextContents(), WAIT).toEqual([expect.stringContaining(NEW_FEED)]);
  expect(await page.getAttribute('#list-summary', 'data-matches')).toBe('1');
  await expect.poll(() => rows(page).locator('.badge-pending').count(), WAIT).toBe(0);
  await page.fill('#search', retried.slice(0, 13));
  await expect.poll(() => rows(page).evaluateAll((lis) => lis.map((li) => (li as HTMLElement).dataset.guid)), WAIT).toEqual([retried]);

  // Transient failures: the next two PATCHes get 503; the change is retried with backoff until it lands.
  await troubleFail(page, 2, '503', 'PATCH');
  await row(page, retried).getByRole('switch').click();
  await expect.poll(() => logLines(page, 'error'), WAIT).toContainEqual(expect.stringMatching(/^server 503: PATCH /));
  await expect.poll(() => serverLog('PATCH', retried).map((e) => e.status), WAIT).toEqual([503, 503, 200]);
  await expect.poll(() => row(page, retried).locator('.badge-pending').count(), WAIT).toBe(0);
  expect(demo.server.entry(retried)?.is_subscribed).toBe(false);

  // A failed pull shows up with its code; the next Sync now succeeds.
  await troubleFail(page, 1, '503', 'GET');
  await page.click('#sync-now');
  await expect.poll(() => logLines(page, 'error'), WAIT).toContainEqual(expect.stringMatching(/^sync now failed: server 503/));
  await expect.poll(() => page.isEnabled('#sync-now'), WAIT).toBe(true);
  await page.click('#sync-now');
  await expect.poll(() => logLines(page, 'sync'), WAIT).toContainEqual(expect.stringMatching(/^sync now: pulled \d+ · pushed \d+/));

  // A refusal (404) lands under "Refused" with its reason; Retry sends it again.
  await troubleFail(page, 1, '404', 'PATCH');
  await page.fill('#search', refused);
  await expect.poll(() => rows(page).count(), WAIT).toBe(1);
  await row(page, refused).getByRole('switch').click();
  const refusedItem = page.locator(`#failed-list > li[data-guid="${refused}"]`);
  await expect.poll(() => refusedItem.textContent(), WAIT).toContain('not-found 404');
  await expect.poll(() => row(page, refused).locator('.badge-failed').count(), WAIT).toBe(1);
  expect(await page.textContent('#st-failed')).toBe('1');
  expect(demo.server.entry(refused)?.is_subscribed).toBe(true);
  await refusedItem.getByRole('button', { name: 'Retry' }).click();
  await expect.poll(() => demo.server.entry(refused)?.is_subscribed, WAIT).toBe(false);
  await expect.poll(() => page.locator('#failed-list > li.change').count(), WAIT).toBe(0);

  // Delete with slow deletion jobs: the pending remove shows its deletion id; ask the server about it.
  await page.fill('#jobs-delay', '2500');
  await page.click('#jobs-form button[type="submit"]');
  await expect.poll(() => logLines(page, 'server'), WAIT).toContainEqual(expect.stringContaining('PENDING 2500 ms'));
  await page.fill('#search', deleted);
  await expect.poll(() => rows(page).count(), WAIT).toBe(1);
  await row(page, deleted).getByRole('button', { name: /^Delete / }).click();
  const job = page.locator(`#pending-list > li[data-guid="${deleted}"][data-kind="remove"] .deletion-result`);
  await expect.poll(() => job.count(), WAIT).toBe(1);
  const deletionId = Number(await job.getAttribute('data-deletion-id'));
  expect(Number.isInteger(deletionId)).toBe(true);
  await page.locator(`#pending-list > li[data-guid="${deleted}"]`).getByRole('button', { name: /^Check deletion/ }).click();
  await expect.poll(() => logLines(page, 'sync'), WAIT).toContainEqual(expect.stringMatching(new RegExp(`^deletion #${deletionId}: PENDING`)));
  await expect.poll(() => page.locator('#pending-list > li.change').count(), WAIT).toBe(0);
  expect(demo.server.entry(deleted)?.deleted).toBeTruthy();
  await page.fill('#deletion-id', String(deletionId));
  await page.click('#deletion-form button[type="submit"]');
  await expect.poll(() => page.textContent('#deletion-result'), WAIT).toMatch(new RegExp(`^#${deletionId}: SUCCESS`));
  await expect.poll(() => rows(page).count(), WAIT).toBe(0); // deleted rows are hidden...
  await page.check('#show-deleted');
  await expect.poll(() => row(page, deleted).locator('.badge-deleted').count(), WAIT).toBe(1); // ...unless asked for
  await page.uncheck('#show-deleted');

  // Another device unsubscribes/subscribes one on the server; the pull after it brings the change here.
  await page.fill('#search', '');
  await page.click('#foreign-toggle');
  await expect.poll(() => logLines(page, 'sync'), WAIT).toContainEqual(expect.stringMatching(/^pull after the other device: pulled [1-9]/));
  const foreignLine = (await logLines(page, 'server')).find((l) => l.startsWith('another device'))!;
  const foreignGuid = /\(([^)]+)\)$/.exec(foreignLine)![1]!;
  await page.fill('#search', foreignGuid);
  await expect.poll(() => row(page, foreignGuid).getAttribute('data-subscribed'), WAIT).toBe(String(demo.server.entry(foreignGuid)?.is_subscribed));
  await page.fill('#search', '');
  await expect.poll(() => rows(page).count(), WAIT).toBe(100);

  // The screenshot in docs/: history in the log, and one change retrying after a 503, slowed by latency.
  await page.fill('#latency-ms', '1500');
  await page.click('#latency-form button');
  await troubleFail(page, 1, '503', 'PATCH');
  const touched = new Set([movedGuid, retried, refused, deleted, foreignGuid]);
  const firstRows = await rows(page).evaluateAll((lis) => lis.slice(0, 6).map((li) => (li as HTMLElement).dataset.guid!));
  const waiting = firstRows.find((g) => !touched.has(g) && demo.server.entry(g)?.is_subscribed)!;
  expect(waiting).toBeDefined();
  await row(page, waiting).getByRole('switch').click();
  await expect.poll(() => row(page, waiting).locator('.badge-pending').count(), WAIT).toBe(1);
  const waitingItem = page.locator(`#pending-list > li[data-guid="${waiting}"]`);
  await expect.poll(() => waitingItem.locator('.change-error').textContent().catch(() => ''), WAIT).toMatch(/^retrying after server 503/);
  await page.evaluate(() => {
    (document.activeElement as HTMLElement | null)?.blur();
    window.scrollTo(0, 0);
  });
  mkdirSync(dirname(SCREENSHOT), { recursive: true });
  await page.screenshot({ path: SCREENSHOT, fullPage: true });
  await page.fill('#latency-ms', '0');
  await page.click('#latency-form button');
  await expect.poll(() => row(page, waiting).locator('.badge-pending').count(), WAIT).toBe(0);
  expect(serverLog('PATCH', waiting).map((e) => e.status)).toEqual([503, 200]);

  // Remembered across reloads: the page size typed before connecting, and the connection itself.
  expect(loads()).toBe(1);
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  expect(await page.inputValue('#page-size')).toBe('40');
  await expect.poll(() => page.textContent('#sub-count'), WAIT).toBe('200');
  await expect.poll(() => page.textContent('#st-phase'), WAIT).toBe('idle');

  // Disconnect closes the client: no list, no controls, no more requests.
  await page.click('#disconnect');
  await expect.poll(() => page.textContent('#phase-pill'), WAIT).toBe('disconnected');
  expect(await page.textContent('#sub-count')).toBe('—');
  expect(await rows(page).count()).toBe(0);
  expect(await page.isHidden('#trouble')).toBe(true);
  const requestsAtClose = demo.server.log().length;
  await page.waitForTimeout(300);
  expect(demo.server.log().length).toBe(requestsAtClose);

  // Clear local data, then a slow pull: the progress bar shows pages and entries of the total.
  await page.click('#connect');
  await expect.poll(() => page.textContent('#sub-count'), WAIT).toBe('200');
  await page.click('#clear-local');
  await expect.poll(() => page.textContent('#sub-count'), WAIT).toBe('0');
  await page.fill('#latency-ms', '400');
  await page.click('#latency-form button');
  await expect.poll(() => logLines(page, 'server'), WAIT).toContainEqual(expect.stringContaining('waits 400 ms'));
  await page.click('#sync-now');
  await expect.poll(() => page.isVisible('#pull-progress'), WAIT).toBe(true);
  await expect.poll(() => page.textContent('#pull-text'), WAIT).toMatch(/^page [1-4] · \d+ of 200 entries$/);
  await expect.poll(() => page.isVisible('#pull-progress'), WAIT).toBe(false);
  await expect.poll(() => page.textContent('#sub-count'), WAIT).toBe('200');
  await page.fill('#latency-ms', '0');
  await page.click('#latency-form button');

  expect(errors).toEqual([]);
  expect(loads()).toBe(2);
  await page.close();

  // Phone width: one column, nothing wider than the screen.
  const phone = await openPage(390, 844);
  await phone.page.click('#connect');
  await expect.poll(() => phone.page.textContent('#sub-count'), WAIT).toBe('200');
  await expect.poll(() => rows(phone.page).count(), WAIT).toBe(100);
  const overflow = await phone.page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    client: document.documentElement.clientWidth,
    widest: Math.max(...[...document.querySelectorAll('.card, .sub, .top')].map((el) => el.getBoundingClientRect().right)),
  }));
  expect(overflow.scroll).toBeLessThanOrEqual(overflow.client);
  expect(overflow.widest).toBeLessThanOrEqual(390);
  const cards = await phone.page.evaluate(() =>
    ['#connection', '#status', '#subscriptions', '#outbox', '#log'].map((id) => {
      const r = document.querySelector(id)!.getBoundingClientRect();
      return { left: Math.round(r.left), right: Math.round(r.right), top: r.top };
    }),
  );
  // Stacked in one column, each card the full width, in this order.
  expect(new Set(cards.map((c) => `${c.left}-${c.right}`)).size).toBe(1);
  expect(cards.map((c) => c.top)).toEqual([...cards.map((c) => c.top)].sort((a, b) => a - b));
  mkdirSync(dirname(PHONE_SHOT), { recursive: true });
  await phone.page.screenshot({ path: PHONE_SHOT, fullPage: true });
  expect(phone.errors).toEqual([]);
  await phone.page.close();
}, 90_000);
