// `npx tsx test/bench/leaving-firefox-probe.ts`: why a Firefox tab close sometimes loses the last-chance send
// (README "Leaving the page"). Per way of closing a tab, counts of closes whose `pagehide` ran (the page tells a
// same-origin tab over a BroadcastChannel), whose `sendBeacon` reached a local server, and whose keepalive
// `fetch` (JSON and Authorization, as the last-chance copy) did. `RUNS=N`, `CLOSES=bidi,...`, `BUSY=ms` (work in
// `pagehide` before the fetch), `FETCH_AT=visibilitychange` (the fetch at `visibilitychange` hidden instead).
import http from 'node:http';
import puppeteer, { type BrowserContext, type Page } from 'puppeteer-core';
import { enginePaths } from '../support/requirements.ts';

const RUNS = Number(process.env['RUNS'] ?? 20);
const CLOSES = (process.env['CLOSES'] ?? 'bidi,bidi-prompt,self-close,opened,navigate').split(',');
const BUSY = Number(process.env['BUSY'] ?? 0);
const FETCH_AT = process.env['FETCH_AT'] === 'visibilitychange' ? 'visibilitychange' : 'pagehide';

/** What reached the server, per page id: 'beacon', 'keepalive'. */
const arrived = new Map<string, Set<string>>();

const probePage = (id: string) => `<!doctype html><script>
const id = ${JSON.stringify(id)};
const channel = new BroadcastChannel('probe');
const keepalive = () => fetch('/keepalive?id=' + id, { method: 'POST', keepalive: true, body: JSON.stringify({ id }), headers: { 'Content-Type': 'application/json', Authorization: 'Basic YTpi' }, credentials: 'omit', cache: 'no-store' }).catch(() => {});
addEventListener('pagehide', () => {
  channel.postMessage(id);
  const until = performance.now() + ${BUSY};
  while (performance.now() < until);
  navigator.sendBeacon('/beacon?id=' + id, 'x');
  if (${JSON.stringify(FETCH_AT)} === 'pagehide') keepalive();
});
document.addEventListener('visibilitychange', () => { if (document.visibilityState === 'hidden' && ${JSON.stringify(FETCH_AT)} === 'visibilitychange') keepalive(); });
</script>`;
const listenerPage = `<!doctype html><script>window.hidden = []; new BroadcastChannel('probe').onmessage = (e) => window.hidden.push(e.data);</script>`;

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const id = url.searchParams.get('id') ?? '';
  res.setHeader('Content-Type', 'text/html');
  if (url.pathname === '/page') return void res.end(probePage(id));
  if (url.pathname === '/listener') return void res.end(listenerPage);
  req.resume();
  req.on('end', () => {
    arrived.set(id, (arrived.get(id) ?? new Set()).add(url.pathname.slice(1)));
    res.end('ok');
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A tab the probe page runs in: its own (as the tests' `newPage`), or opened by script from the listener tab. */
async function open(context: BrowserContext, listener: Page, how: string, url: string): Promise<Page> {
  if (how !== 'opened' && how !== 'window-close') {
    const page = await context.newPage();
    await page.goto(url, { waitUntil: 'load' });
    return page;
  }
  const created = new Promise<Page>((resolve) => context.once('targetcreated', (target) => void target.page().then((p) => resolve(p!))));
  await listener.evaluate((u) => void ((window as unknown as { w: Window | null }).w = window.open(u, '_blank')), url);
  const page = await created;
  await page.waitForFunction(() => document.readyState === 'complete');
  return page;
}

async function close(page: Page, listener: Page, how: string): Promise<void> {
  if (how === 'bidi' || how === 'opened') return page.close();
  if (how === 'bidi-prompt') return page.close({ runBeforeUnload: true });
  if (how === 'self-close') return void page.evaluate(() => window.close()).catch(() => undefined);
  if (how === 'window-close') return void (await listener.evaluate(() => (window as unknown as { w: Window }).w.close()));
  await page.goto(`${base}/listener`, { waitUntil: 'load' });
  await page.close();
}

const browser = await puppeteer.launch({ browser: 'firefox', executablePath: enginePaths('firefox')[0]!, headless: true });
console.log(`${await browser.version()}, ${RUNS} runs, keepalive fetch at ${FETCH_AT}${BUSY ? ` after ${BUSY} ms of work` : ''}`);
console.log('| close | pagehide ran | sendBeacon arrived | keepalive fetch arrived |\n|---|---|---|---|');
for (const how of CLOSES) {
  const context = await browser.createBrowserContext();
  const listener = await context.newPage();
  await listener.goto(`${base}/listener`);
  const count = { pagehide: 0, beacon: 0, keepalive: 0 };
  for (let i = 0; i < RUNS; i++) {
    const id = `${how}-${i}-${Date.now()}`;
    const page = await open(context, listener, how, `${base}/page?id=${id}`);
    await close(page, listener, how);
    for (let t = 0; t < 60 && arrived.get(id)?.size !== 2; t++) await sleep(50);
    if ((await listener.evaluate(() => (window as unknown as { hidden: string[] }).hidden)).includes(id)) count.pagehide++;
    if (arrived.get(id)?.has('beacon')) count.beacon++;
    if (arrived.get(id)?.has('keepalive')) count.keepalive++;
  }
  console.log(`| ${how} | ${count.pagehide}/${RUNS} | ${count.beacon}/${RUNS} | ${count.keepalive}/${RUNS} |`);
  await context.close();
}
await browser.close();
server.close();
