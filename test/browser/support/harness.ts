// Node-side helpers for the browser suite: the test page served by Vite's dev server (the real client, the real
// module worker, real IndexedDB), a browser of each engine, the reference server, polling.
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createServer, type ViteDevServer } from 'vite';
import { afterAll, beforeAll, beforeEach, describe } from 'vitest';
import { startServer } from '../../server/server.ts';
import type { RefServer, RequestLogEntry, ServerOptions } from '../../server/types.ts';
import { launchBrowser, selectedEngines, type Browser, type BrowserContext, type BrowserPage, type EngineName } from '../../support/browsers.ts';
import { waitFor } from '../../support/wait.ts';
import type { PageOptions } from './page-api.ts';

export type { PageApi, PageOptions } from './page-api.ts';
export { sleep, waitFor } from '../../support/wait.ts';
export type { Browser, BrowserContext, BrowserPage, EngineName } from '../../support/browsers.ts';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const pagesDir = fileURLToPath(new URL('../pages/', import.meta.url));

/**
 * Run `body` once per engine of this run (BROWSERS narrows it), inside a `describe` named for the engine, so
 * every test title says where it ran.
 */
export function forEachEngine(body: (engine: EngineName) => void): void {
  for (const engine of selectedEngines()) describe(engine, () => body(engine));
}

/**
 * Serve the test page with Vite's dev server on 127.0.0.1; `opa-sync` resolves to this repo's src. `proxy` maps
 * path prefixes to another server, as a deployment puts a server without CORS behind the page's own origin.
 */
export async function startPages(proxy: Record<string, string> = {}): Promise<{ url: string; close(): Promise<void> }> {
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
    server: { host: '127.0.0.1', port: 0, strictPort: false, hmr: false, watch: null, fs: { allow: [repo] }, proxy },
  });
  await server.listen();
  const address = server.httpServer?.address();
  if (!address || typeof address === 'string') throw new Error('the Vite dev server did not report its port');
  return { url: `http://127.0.0.1:${address.port}/`, close: () => server.close() };
}

/** Everything one test file needs in one engine: the browser, the page server and a seeded reference server. */
export interface Harness {
  engine: EngineName;
  browser: Browser;
  pages: { url: string };
  server: RefServer;
  close(): Promise<void>;
}

/**
 * One harness per engine block of a test file (closed after it), with the reference server reset before each
 * test: a fresh seed, an empty log, no faults, so each test reads only its own requests.
 */
export function harnessPerFile(engine: EngineName, serverOptions: ServerOptions = {}): Harness {
  const inner = perBlock(() => startHarness(engine, serverOptions), (h) => h.close());
  beforeEach(() => inner().server.reset());
  // Read through to the harness the hooks start (it exists only once the block's tests run).
  return new Proxy({} as Harness, { get: (_, key) => Reflect.get(inner(), key) });
}

/**
 * Start a resource before the block's tests and close it after. Should starting fail (a browser that is not
 * installed), every test of the block fails with that error: reported as failed, not skipped.
 */
export function perBlock<T>(start: () => Promise<T>, close: (value: T) => Promise<void>): () => T {
  let value: T | undefined;
  let failure: unknown;
  beforeAll(async () => {
    try {
      value = await start();
    } catch (error) {
      failure = error;
    }
  });
  beforeEach(() => {
    if (failure !== undefined) throw failure;
  });
  afterAll(async () => {
    if (value !== undefined) await close(value);
  });
  return () => {
    if (value === undefined) throw failure ?? new Error('used outside its tests');
    return value;
  };
}

/**
 * Start the engine (throws with the install line when it is missing: the suite must fail, not skip), the page
 * server and a reference server.
 */
export async function startHarness(engine: EngineName, serverOptions: ServerOptions = {}): Promise<Harness> {
  const browser = await launchBrowser(engine);
  let pages: Awaited<ReturnType<typeof startPages>> | undefined;
  let server: RefServer | undefined;
  try {
    pages = await startPages();
    server = await startServer({ port: 0, randomSeed: 0x5eed, ...serverOptions });
  } catch (error) {
    await pages?.close();
    await browser.close();
    throw error;
  }
  const p = pages;
  const s = server;
  return {
    engine,
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

/**
 * How the test page starts its client: the package's worker, or the same entry with its requests logged
 * (`logged`), and also without Web Locks (`no-locks`) or without Web Locks and BroadcastChannel (`bare`).
 */
export interface PageMode {
  worker?: 'package' | 'logged' | 'no-locks' | 'bare';
}

/** The page's address for these options (they travel in the URL, so a reload keeps them). */
export function pageUrl(pagesUrl: string, options: PageOptions, mode: PageMode = {}): string {
  const worker = mode.worker && mode.worker !== 'package' ? `&worker=${mode.worker}` : '';
  return `${pagesUrl}index.html?options=${encodeURIComponent(JSON.stringify(options))}${worker}`;
}

/** Open the test page in `context` and wait until `window.opa` is there. */
export async function openPage(context: BrowserContext, pagesUrl: string, options: PageOptions, mode: PageMode = {}): Promise<BrowserPage> {
  const page = await context.newPage();
  await page.goto(pageUrl(pagesUrl, options, mode));
  await ready(page);
  return page;
}

/** Wait for the test page's API after a navigation or reload. */
export async function ready(page: BrowserPage): Promise<void> {
  await waitFor('the test page to be ready', () => page.evaluate(() => document.getElementById('state')?.textContent === 'ready' && 'opa' in window), 30_000);
}

/** Uncaught errors seen on the page and in its worker: the driver's and the page's own record, together. */
export async function pageErrors(page: BrowserPage): Promise<string[]> {
  const own = await page.evaluate(() => ('opa' in window ? window.opa.errors : []));
  return [...(await page.errors()), ...own];
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

/**
 * Take `context` off the network: the engine's own offline switch (see `Browser.offlineSignal`), and the
 * reference server cutting every connection, so a request that went out anyway fails as it would offline
 * (and is still in the server's log for a test to see).
 */
export async function goOffline(context: BrowserContext, server: RefServer): Promise<void> {
  server.dropNext(1_000_000);
  await context.setOffline(true);
}

/** Back online: the server answers again, then the pages hear that the network is back. */
export async function goOnline(context: BrowserContext, server: RefServer): Promise<void> {
  server.clearFaults();
  await context.setOffline(false);
}
