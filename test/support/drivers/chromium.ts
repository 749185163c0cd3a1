// Chromium behind the Browser interface, through playwright-core.
import { execFileSync } from 'node:child_process';
import type { BrowserContext as PwContext, Page, Worker } from 'playwright-core';
import { chromiumPath, launchChromium, launchPersistent } from '../chromium.ts';
import type { Browser, BrowserContext, BrowserPage, LaunchOptions, PageDriver } from '../driver.ts';
import { browserPage } from '../page.ts';

const native = new WeakMap<BrowserPage, Page>();

/** The Playwright page behind a Chromium BrowserPage (for Chromium-only measurements such as CDP heap sampling). */
export function playwrightPage(page: BrowserPage): Page | undefined {
  return native.get(page);
}

function pageDriver(page: Page): PageDriver {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`page: ${error.message}`));
  page.on('worker', (worker: Worker) => {
    worker.on('console', (message) => {
      if (message.type() === 'error') errors.push(`worker console: ${message.text()}`);
    });
  });
  return {
    evaluateString: (expression) => page.evaluate(expression) as Promise<string>,
    goto: async (url) => void (await page.goto(url)),
    reload: async () => void (await page.reload()),
    click: (selector) => page.click(selector),
    fill: (selector, value) => page.fill(selector, value),
    select: async (selector, value) => void (await page.selectOption(selector, value)),
    screenshot: async (path) => void (await page.screenshot({ path, fullPage: true })),
    errors: async () => [...errors],
    close: () => page.close(),
  };
}

function context(pw: PwContext, onClose: () => Promise<void>): BrowserContext {
  return {
    async newPage(viewport) {
      const page = await pw.newPage();
      if (viewport) await page.setViewportSize(viewport);
      const wrapped = browserPage('chromium', pageDriver(page));
      native.set(wrapped, page);
      return wrapped;
    },
    setOffline: (offline) => pw.setOffline(offline),
    close: onClose,
  };
}

function version(): string {
  try {
    return execFileSync(chromiumPath(), ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'Chromium (version unknown)';
  }
}

/** Launch Chromium: off-the-record contexts, or the one context of an on-disk profile. */
export async function launchChromiumBrowser(options: LaunchOptions = {}): Promise<Browser> {
  const base = { engine: 'chromium' as const, version: version(), offlineSignal: 'browser' as const };
  if (options.profileDir) {
    const persistent = await launchPersistent(options.profileDir);
    let made = false;
    return {
      ...base,
      async newContext() {
        if (made) throw new Error('an on-disk Chromium profile has one context');
        made = true;
        return context(persistent, async () => undefined);
      },
      close: () => persistent.close().catch(() => undefined),
    };
  }
  const browser = await launchChromium();
  return {
    ...base,
    async newContext() {
      const pw = await browser.newContext();
      return context(pw, () => pw.close());
    },
    close: () => browser.close().catch(() => undefined),
  };
}
