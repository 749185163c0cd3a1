// The browser side of a bench run, in any engine, with IndexedDB on disk where the engine allows it: Chromium
// and Firefox get a profile in a temp dir (Playwright's default Chromium contexts are off the record, with
// IndexedDB in memory, which would flatter every write). WebKitGTK's MiniBrowser cannot: a WebDriver
// session of it is ephemeral, so its IndexedDB lives in memory (`onDisk: false` in the figures).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchBrowser, type Browser, type BrowserContext, type BrowserPage, type EngineName } from '../../support/browsers.ts';
import { waitFor } from '../../support/wait.ts';
import type { BenchApi } from '../pages/api.ts';

/** The browser side of a bench run. */
export interface BenchBrowser {
  engine: EngineName;
  context: BrowserContext;
  /** Where the built pages are served (`http://bench.localhost:PORT/`). */
  site: string;
  /** Open the bench page in a new tab and wait for `window.bench`. */
  openPage(): Promise<BrowserPage>;
  version: string;
  /** Whether IndexedDB is on disk (a real profile) rather than in memory. */
  onDisk: boolean;
  close(): Promise<void>;
}

/** Launch `engine` on a fresh on-disk profile where it can; pages come from `siteUrl`. */
export async function launchBenchBrowser(engine: EngineName, siteUrl: string): Promise<BenchBrowser> {
  const profile = await mkdtemp(join(tmpdir(), 'opa-bench-profile-'));
  let browser: Browser;
  let context: BrowserContext;
  try {
    browser = await launchBrowser(engine, { profileDir: profile });
    context = await browser.newContext();
  } catch (error) {
    await rm(profile, { recursive: true, force: true });
    throw error;
  }
  return {
    engine,
    context,
    site: siteUrl,
    version: browser.version,
    onDisk: engine !== 'webkit',
    async openPage() {
      const page = await context.newPage();
      await page.goto(siteUrl);
      await waitFor('the bench page', () => page.evaluate(() => document.getElementById('state')?.textContent === 'ready' && 'bench' in window), 30_000);
      return page;
    },
    async close() {
      await context.close().catch(() => undefined);
      await browser.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** Call `window.bench[method](...args)` in the page. */
export function call<K extends keyof BenchApi>(page: BrowserPage, method: K, ...args: Parameters<BenchApi[K]>): Promise<Awaited<ReturnType<BenchApi[K]>>> {
  return page.evaluate(
    ({ m, a }) => (window.bench[m as K] as (...x: unknown[]) => Promise<unknown>)(...(a as unknown[])),
    { m: method, a: args },
  ) as Promise<Awaited<ReturnType<BenchApi[K]>>>;
}
