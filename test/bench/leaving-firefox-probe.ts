// `npx tsx test/bench/leaving-firefox-probe.ts`: why a Firefox tab close sometimes loses the last-chance send
// (README "Leaving the page"). Per way of closing a tab, counts of closes whose `pagehide` ran (the page tells a
// same-origin tab over a BroadcastChannel), whose `sendBeacon` reached a local server, and whose keepalive
// `fetch` (JSON and Authorization, as the last-chance copy) did. `RUNS=N`, `CLOSES=bidi,...`, `BUSY=ms` (work in
// `pagehide` before the fetch), `FETCH_AT=visibilitychange` (the fetch at `visibilitychange` hidden instead),
// `SEND=keepalive|beacon` (only one of the two), `COOKIE=1` (the fetch with a cookie, no Authorization).
//
// `CLIENT=session npx tsx test/bench/leaving-firefox-probe.ts`: the real client instead of a stand-in page, on
// gPodder with session auth (`auth: { type: 'session' }`, the cookie from the server's login; the page reaches the
// reference server through its own origin), as the leaving bench's closes (a throttled `setProgress`, then the
// tab closed). Closes alternate between the client's own last copy (keepalive `fetch`) and the same requests
// with `navigator.sendBeacon`: a wrapper of the page's `fetch` tags each copy request's URL with `?via=` and,
// in the beacon arm, hands it to `sendBeacon` instead. Counts per arm: copies that reached the server with the
// session cookie, closes whose page handed the copy over (told to an open tab on a BroadcastChannel), and closes
// where the worker's own push got there. `RUNS=N` (per arm), `CLOSE=tab|navigate`.
import http from 'node:http';
import puppeteer, { type BrowserContext, type Page } from 'puppeteer-core';
import { enginePaths } from '../support/requirements.ts';
import { startGpodderServer } from '../server/gpodder/server.ts';
import { launchBrowser } from '../support/browsers.ts';
import { waitFor } from '../support/wait.ts';
import { pageUrl, ready, startPages } from '../browser/support/harness.ts';

if (process.env['CLIENT'] === 'session') await sessionProbe();
else await syntheticProbe();

/** The stand-in page: `sendBeacon` and a keepalive `fetch` in the same `pagehide`. */
async function syntheticProbe(): Promise<void> {
  const RUNS = Number(process.env['RUNS'] ?? 20);
  const CLOSES = (process.env['CLOSES'] ?? 'bidi,bidi-prompt,self-close,opened,navigate').split(',');
  const BUSY = Number(process.env['BUSY'] ?? 0);
  const FETCH_AT = process.env['FETCH_AT'] === 'visibilitychange' ? 'visibilitychange' : 'pagehide';
  const SEND = process.env['SEND'] === 'keepalive' || process.env['SEND'] === 'beacon' ? process.env['SEND'] : 'both';
  // The keepalive fetch's credentials: the Authorization header (as Basic and bearer), or a cookie (a gPodder session).
  const COOKIE = process.env['COOKIE'] === '1';
  const fetchCredentials = COOKIE ? `headers: { 'Content-Type': 'application/json' }` : `headers: { 'Content-Type': 'application/json', Authorization: 'Basic YTpi' }, credentials: 'omit'`;

  /** What reached the server, per page id: 'beacon', 'keepalive'. */
  const arrived = new Map<string, Set<string>>();

  const probePage = (id: string) => `<!doctype html><script>
  const id = ${JSON.stringify(id)};
  const channel = new BroadcastChannel('probe');
  ${COOKIE ? `document.cookie = 'sessionid=' + id + '; path=/';` : ''}
  const keepalive = () => ${SEND === 'beacon' ? '0' : `fetch('/keepalive?id=' + id, { method: 'POST', keepalive: true, body: JSON.stringify({ id }), ${fetchCredentials}, cache: 'no-store' }).catch(() => {})`};
  addEventListener('pagehide', () => {
    channel.postMessage(id);
    const until = performance.now() + ${BUSY};
    while (performance.now() < until);
    if (${JSON.stringify(SEND)} !== 'keepalive') navigator.sendBeacon('/beacon?id=' + id, 'x');
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
      // With COOKIE=1 a keepalive fetch counts only when it carried the page's cookie.
    if (!(COOKIE && url.pathname === '/keepalive' && !(req.headers.cookie ?? '').includes(`sessionid=${id}`))) {
      arrived.set(id, (arrived.get(id) ?? new Set()).add(url.pathname.slice(1)));
    }
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
  console.log(`${await browser.version()}, ${RUNS} runs, sending ${SEND}, keepalive fetch at ${FETCH_AT} with ${COOKIE ? 'a cookie' : 'an Authorization header'}${BUSY ? ` after ${BUSY} ms of work` : ''}`);
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
      for (let t = 0; t < 60 && (arrived.get(id)?.size ?? 0) < (SEND === 'both' ? 2 : 1); t++) await sleep(50);
      if ((await listener.evaluate(() => (window as unknown as { hidden: string[] }).hidden)).includes(id)) count.pagehide++;
      if (arrived.get(id)?.has('beacon')) count.beacon++;
      if (arrived.get(id)?.has('keepalive')) count.keepalive++;
    }
    console.log(`| ${how} | ${count.pagehide}/${RUNS} | ${count.beacon}/${RUNS} | ${count.keepalive}/${RUNS} |`);
    await context.close();
  }
  await browser.close();
  server.close();
}

/** The real client on gPodder with session auth: its keepalive last copy against the same copy sent with `sendBeacon`. */
async function sessionProbe(): Promise<void> {
  const runs = Number(process.env['RUNS'] ?? 20);
  const closeBy = process.env['CLOSE'] === 'navigate' ? 'navigate' : 'tab';
  const device = 'probe-leaving';
  const server = await startGpodderServer({ port: 0, dialect: 'opodsync' });
  const pages = await startPages({ '/api/2': server.url });
  const browser = await launchBrowser('firefox');
  server.registerDevice(device);
  const podcast = 'https://feeds.example/probe/leaving.xml';
  server.foreign.add([podcast], { device });
  const origin = new URL(pages.url).origin;
  const count = { keepalive: { runs: 0, asked: 0, sent: 0, copy: 0, worker: 0, either: 0 }, beacon: { runs: 0, asked: 0, sent: 0, copy: 0, worker: 0, either: 0 } };
  try {
    const context = await browser.newContext();
    // A tab that stays open, as the leaving bench's (closing a context's last tab may end it); it hears on a
    // BroadcastChannel which closes handed their copy to the network.
    const listener = await context.newPage();
    await listener.goto(`${pages.url}inert.html`);
    await listener.evaluate(() => {
      const heard: string[] = [];
      (window as unknown as { heard: string[] }).heard = heard;
      new BroadcastChannel('probe-copy').onmessage = (e: MessageEvent<string>) => void heard.push(e.data);
    });
    for (let i = 0; i < 2 * runs; i++) {
      const arm = i % 2 === 0 ? 'keepalive' : 'beacon';
      const episode = `https://media.example/probe/${arm}-${i}-${Date.now()}.mp3`;
      const options = {
        protocol: 'gpodder' as const,
        baseUrl: origin,
        auth: { type: 'session' as const, username: 'alice', password: 'alice-password' },
        device,
        dbName: `probe-leaving-${i}-${Date.now()}`,
        pullInterval: 0,
      };
      const page = await context.newPage();
      await page.goto(pageUrl(pages.url, options));
      await ready(page);
      await page.evaluate(async ([podcast, episode, arm]) => {
        const send = window.fetch.bind(window);
        // Only the copy goes with `keepalive` from the page: tag it, and in the beacon arm send it so instead.
        window.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
          if (!init?.keepalive) return send(input, init);
          const url = new URL(String(input));
          url.searchParams.set('via', arm);
          const told = new BroadcastChannel('probe-copy');
          told.postMessage(`${episode} asked`);
          if (arm === 'keepalive') {
            told.postMessage(episode);
            return send(url, init);
          }
          const type = (init.headers as Record<string, string> | undefined)?.['Content-Type'] ?? 'application/json';
          const queued = navigator.sendBeacon(url, new Blob([String(init.body ?? '')], { type }));
          if (queued) told.postMessage(episode);
          return queued ? Promise.resolve(new Response(null, { status: 204 })) : Promise.reject(new TypeError('sendBeacon refused the copy'));
        };
        const ref = { podcast, episode };
        await window.opa.client.sync();
        await window.opa.client.setProgress(ref, { position: 5, total: 1800 });
        await window.opa.client.sync();
        await window.opa.client.setProgress(ref, { position: 42 });
      }, [podcast, episode, arm] as const);
      if (closeBy === 'navigate') await page.goto(`${pages.url}inert.html`);
      await page.close();
      const position = (e: { method: string; path: string; body?: unknown }) =>
        e.method === 'POST' && /episodes/.test(e.path) && JSON.stringify(e.body).includes(episode) && JSON.stringify(e.body).includes('"position":42');
      // A close not delivered within 5 s counts as not delivered (the next open would send it).
      await waitFor('the copy', () => server.log().some((e) => position(e) && e.query['via'] === arm), 5000, 20).catch(() => undefined);
      const arrived = server.log().filter(position);
      const copy = arrived.some((e) => e.query['via'] === arm && e.authorized && e.status >= 200 && e.status < 300);
      const worker = arrived.some((e) => e.query['via'] === undefined && e.authorized);
      const c = count[arm];
      c.runs++;
      const heard = await listener.evaluate(() => (window as unknown as { heard: string[] }).heard);
      if (heard.includes(`${episode} asked`)) c.asked++;
      if (heard.includes(episode)) c.sent++;
      if (copy) c.copy++;
      if (worker) c.worker++;
      if (copy || worker) c.either++;
    }
    await context.close();
    console.log(`${browser.version}, gPodder (opodsync dialect) with session auth through the page's origin, ${runs} closes per arm (${closeBy === 'tab' ? 'tab closed' : 'navigated away, then closed'})`);
    console.log('| last copy sent with | the client sent its copy (pagehide ran) | handed to the network (fetch called; sendBeacon true) | copy reached the server with the cookie | worker’s own push got there | position on the server |\n|---|---|---|---|---|---|');
    for (const [arm, c] of Object.entries(count)) {
      const name = arm === 'keepalive' ? 'keepalive fetch (the client today)' : 'navigator.sendBeacon';
      console.log(`| ${name} | ${c.asked}/${c.runs} | ${c.sent}/${c.runs} | ${c.copy}/${c.runs} | ${c.worker}/${c.runs} | ${c.either}/${c.runs} |`);
    }
  } finally {
    await browser.close();
    await pages.close();
    await server.close();
  }
}
