// Node-side helpers for the browser suite: the test page served by Vite's dev server (the real client,
// the real module worker, real IndexedDB), headless Chromium, the reference server, polling.
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page, Worker } from 'playwright-core';
import { createServer, type ViteDevServer } from 'vite';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { startServer } from '../../server/server.ts';
import type { RefServer, RequestLogEntry, ServerOptions } from '../../server/types.ts';
import { launchChromium } from '../../support/chromium.ts';
import type { PageOptions } from './page-api.ts';

export type { PageApi, PageOptions } from './page-api.ts';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const pagesDir = fileURLToPath(new URL('../pages/', import.meta.url));

/** Serve the test page with Vite's dev server on 127.0.0.1; `opa-sync` resolves to this repo's src. */
export async function startPages(): Promise<{ url: string; close(): Promise<void> }> {
  const server: ViteDevServer = await createServer({
    configFile: false,
    root: pagesDir,
    logLevel: 'warn',
    clearScreen: false,
    // Its own cache, so the demo's dev server and this one never fight over pre-bundled deps.
    cacheDir: `${repo}node_modules/.vite-browser-tests`,
    resolve: { alias: { 'opa-sync': `${repo}src/index.ts` } },
    // Pre-bundle both deps up front: a dependency discovered on first load would make Vite reload the page.
    optimizeDeps: { include: ['dexie', 'comlink'], noDiscovery: true },
    worker: { format: 'es' },
    server: { host: '127.0.0.1', port: 0, strictPort: false, hmr: false, watch: null, fs: { allow: [repo] } },
  });
  await server.listen();
  const address = server.httpServer?.address();
  if (!address || typeof address === 'string') throw new Error('the Vite dev server did not report its port');
  return { url: `http://127.0.0.1:${address.port}/`, close: () => server.close() };
}

/** Everything one test file needs: Chromium, the page server and a seeded reference server. */
export interface Harness {
  browser: Browser;
  pages: { url: string };
  server: RefServer;
  close(): Promise<void>;
}

/**
 * Start Chromium (throws with the install hint when it is missing: the suite must fail, not skip), the page
 * server and a reference server.
 */
/**
 * One harness for a test file (closed after it), with the reference server reset before each test: a fresh
 * seed, an empty log, no faults, so each test reads only its own requests.
 */
export function harnessPerFile(serverOptions: ServerOptions = {}): Harness {
  let inner: Harness | undefined;
  beforeAll(async () => {
    inner = await startHarness(serverOptions);
  });
  beforeEach(() => inner!.server.reset());
  afterAll(async () => {
    await inner?.close();
  });
  // Read through to the harness the hooks start (it exists only once the file's tests run).
  return new Proxy({} as Harness, { get: (_, key) => Reflect.get(inner!, key) });
}

export async function startHarness(serverOptions: ServerOptions = {}): Promise<Harness> {
  const browser = await launchChromium();
  let pages: Awaited<ReturnType<typeof startPages>> | undefined;
  let server: RefServer | undefined;
  try {
    pages = await startPages();
    server = await startServer({ port: 0, ...serverOptions });
  } catch (error) {
    await pages?.close();
    await browser.close();
    throw error;
  }
  const p = pages;
  const s = server;
  return {
    browser,
    pages: p,
    server: s,
    async close() {
      await browser.close().catch(() => undefined);
      await p.close().catch(() => undefined);
      await s.close().catch(() => undefined);
    },
  };
}

/** A database name no other test uses. */
export function uniqueDbName(label: string): string {
  return `opa-test-${label}-${randomUUID()}`;
}

/** Client options for the reference server: bearer token, no background pull, quick retries. */
export function clientOptions(server: RefServer, dbName: string, extra: Partial<PageOptions> = {}): PageOptions {
  return {
    baseUrl: server.url,
    auth: { type: 'bearer', token: 'demo-token' },
    dbName,
    pullInterval: 0,
    pushDelay: 20,
    retry: { baseDelay: 100, maxDelay: 500 },
    ...extra,
  };
}

/** The page's address for these options (they travel in the URL, so a reload keeps them). */
export function pageUrl(pagesUrl: string, options: PageOptions): string {
  return `${pagesUrl}index.html?options=${encodeURIComponent(JSON.stringify(options))}`;
}

/** Open the test page in `context` and wait until `window.opa` is there. Page errors fail loudly. */
export async function openPage(context: BrowserContext, pagesUrl: string, options: PageOptions): Promise<Page> {
  const page = await context.newPage();
  watchErrors(page);
  await page.goto(pageUrl(pagesUrl, options));
  await ready(page);
  return page;
}

/** Wait for the test page's API after a navigation or reload. */
export async function ready(page: Page): Promise<void> {
  await page.waitForFunction(() => document.getElementById('state')?.textContent === 'ready' && 'opa' in window, undefined, {
    timeout: 30_000,
  });
}

const watched = new WeakSet<Page>();
/** Uncaught page and worker errors are collected on the page object; `pageErrors(page)` reads them. */
function watchErrors(page: Page): void {
  if (watched.has(page)) return;
  watched.add(page);
  const errors: string[] = [];
  (page as Page & { __errors?: string[] }).__errors = errors;
  page.on('pageerror', (error) => errors.push(`page: ${error.message}`));
  page.on('worker', (worker: Worker) => {
    worker.on('console', (message) => {
      if (message.type() === 'error') errors.push(`worker console: ${message.text()}`);
    });
  });
}

/** Uncaught errors seen on the page (and console errors in its workers). */
export function pageErrors(page: Page): string[] {
  return (page as Page & { __errors?: string[] }).__errors ?? [];
}

/** Poll `check` until it returns a truthy value; throws with `what` and the last value when time runs out. */
export async function waitFor<T>(what: string, check: () => T | Promise<T>, timeout = 15_000, interval = 50): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeout;
  let last: T | undefined;
  let lastError: unknown;
  for (;;) {
    try {
      last = await check();
      if (last) return last as NonNullable<T>;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const detail = lastError ? ` (last error: ${String(lastError)})` : ` (last value: ${JSON.stringify(last)})`;
      throw new Error(`timed out after ${timeout} ms waiting for ${what}${detail}`);
    }
    await sleep(interval);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** `/v1/subscriptions/{guid}` requests with `method` in the server's log. */
export function requestsFor(server: RefServer, method: string, guid: string): RequestLogEntry[] {
  const path = `/v1/subscriptions/${encodeURIComponent(guid)}`;
  return server.log().filter((e) => e.method === method && (e.path === path || decodeURIComponent(e.path) === `/v1/subscriptions/${guid}`));
}

/** Requests the server answered for real (not spoiled by an injected fault, not a CORS preflight). */
export function served(entries: RequestLogEntry[]): RequestLogEntry[] {
  return entries.filter((e) => e.fault === undefined && e.status >= 200 && e.status < 300);
}
