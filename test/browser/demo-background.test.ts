// The demo's Background Sync toggle (Chromium, a real service worker): connected with it on, a subscription
// added while the server drops every connection, the page closed; the server back, the demo's service worker
// (demo/sw.ts, opa-sync/sw) sends it with every page closed, and the next page load logs "sent by the service
// worker".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemo, type Demo } from '../../demo/start.ts';
import { launchBrowser, selectedEngines, type Browser, type BrowserContext } from '../support/browsers.ts';
import { waitFor } from './support/harness.ts';
import { ui } from './support/ui.ts';

const FEED = 'https://demo-test.example/background/feed.xml';

/** The demo page, ready, with its UI driver and its log's lines. */
async function openDemo(context: BrowserContext, demo: Demo) {
  const page = await context.newPage();
  await page.goto(demo.url);
  await waitFor('the demo page to be ready', () => page.evaluate(() => document.body.dataset.ready === 'true'), 30_000);
  const u = ui(page);
  return { page, u, log: () => u.texts('#log-list > li .log-text') };
}

describe.runIf(selectedEngines().includes('chromium'))('chromium', () => {
  let browser: Browser;
  let demo: Demo;

  beforeAll(async () => {
    demo = await startDemo({ serverPort: 0, vitePort: 0, logLevel: 'silent', watch: false });
    browser = await launchBrowser('chromium');
  });

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await demo?.close().catch(() => undefined);
  });

  it('the toggle on, a change left while the server is down and the page closed: sent by the service worker, and the next load says so', async () => {
    const context = await browser.newContext();
    // Every demo page closed: this blank tab keeps the context (and its service worker) alive.
    await context.newPage();
    const first = await openDemo(context, demo);
    await first.u.check('#background-sync', true);
    await first.u.click('#connect');
    await waitFor('the status saying background sync is ready', async () => (await first.log()).some((l) => l.includes('background sync: ready')), 30_000);
    await first.page.evaluate(async () => void (await navigator.serviceWorker.ready));

    demo.server.dropNext(1_000_000);
    await first.u.fill('#add-url', FEED);
    await first.u.click('#add-form button[type="submit"]');
    await waitFor('the tag registered', async () => (await first.log()).some((l) => l.includes('background sync: registered')), 30_000);
    // The worker's POST dropped first: the add may have arrived, so the page's last copy holds it back (the push's
    // rule) and only the service worker can send it. Closed before that, the copy carried it, and a keepalive POST
    // that left after clearFaults() below delivered it with no service worker involved (a full run, under load).
    await waitFor('the push to the dead server failed', async () => (await first.log()).some((l) => l.startsWith('unreachable · ')), 30_000);
    await first.page.close();
    demo.server.clearFaults();
    // The service worker's event began when the tag was registered; it retries within the event (1 s, doubling).
    await waitFor('the subscription on the server', () => demo.server.state().some((e) => e.feed_url === FEED), 60_000);
    expect(demo.server.state().filter((e) => e.feed_url === FEED)).toHaveLength(1);

    const next = await openDemo(context, demo);
    await waitFor('the log line', async () => (await next.log()).some((l) => /sent by the service worker at .*: 1 request the server accepted/.test(l)), 15_000);
    await context.close();
  }, 120_000);
});
