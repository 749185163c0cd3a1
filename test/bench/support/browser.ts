// Chromium for the bench: a persistent context on an on-disk profile in a temp dir (Playwright's default
// contexts are off the record, with IndexedDB in memory, which would flatter every write).
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { chromiumPath, launchPersistent } from '../../support/chromium.ts';
import type { BenchApi } from '../pages/api.ts';

/** The browser side of a bench run. */
export interface BenchBrowser {
  context: BrowserContext;
  /** Open the bench page in a new tab and wait for `window.bench`. */
  openPage(): Promise<Page>;
  version: string;
  close(): Promise<void>;
}

/** Launch Chromium on a fresh on-disk profile; pages come from `siteUrl`. */
export async function launchBenchBrowser(siteUrl: string): Promise<BenchBrowser> {
  const profile = await mkdtemp(join(tmpdir(), 'opa-bench-profile-'));
  let context: BrowserContext;
  try {
    context = await launchPersistent(profile);
  } catch (error) {
    await rm(profile, { recursive: true, force: true });
    throw error;
  }
  let version = 'unknown';
  try {
    version = execFileSync(chromiumPath(), ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    // Only for the report.
  }
  // The persistent context starts with a blank tab; it is not used.
  return {
    context,
    version,
    async openPage() {
      const page = await context.newPage();
      page.on('pageerror', (error) => console.error(`bench page error: ${error.message}`));
      await page.goto(siteUrl);
      await page.waitForFunction(() => document.getElementById('state')?.textContent === 'ready' && 'bench' in window, undefined, {
        timeout: 30_000,
      });
      return page;
    },
    async close() {
      await context.close().catch(() => undefined);
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** Call `window.bench[method](...args)` in the page. */
export function call<K extends keyof BenchApi>(page: Page, method: K, ...args: Parameters<BenchApi[K]>): Promise<Awaited<ReturnType<BenchApi[K]>>> {
  return page.evaluate(
    ([m, a]) => (window.bench[m as K] as (...x: unknown[]) => Promise<unknown>)(...(a as unknown[])),
    [method, args] as const,
  ) as Promise<Awaited<ReturnType<BenchApi[K]>>>;
}
