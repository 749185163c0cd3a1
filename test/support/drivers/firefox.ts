// Firefox ESR behind the Browser interface, through puppeteer-core over WebDriver BiDi (no geckodriver:
// Firefox speaks BiDi itself). Each context is a BiDi user context: its own storage, shared by its pages.
import puppeteer, { type Browser as PpBrowser, type BrowserContext as PpContext, type Page } from 'puppeteer-core';
import type { Browser, BrowserContext, LaunchOptions, PageDriver } from '../driver.ts';
import { enginePaths } from '../requirements.ts';
import { browserPage } from '../page.ts';

function pageDriver(page: Page): PageDriver {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`page: ${error instanceof Error ? error.message : String(error)}`));
  return {
    evaluateString: (expression) => page.evaluate(expression) as Promise<string>,
    goto: async (url) => void (await page.goto(url, { waitUntil: 'load' })),
    reload: async () => void (await page.reload({ waitUntil: 'load' })),
    click: (selector) => page.click(selector),
    // Typed as a person would (select all, delete, type): every keystroke fires input events, clearing too.
    async fill(selector, value) {
      await page.focus(selector);
      await page.keyboard.down('Control');
      await page.keyboard.press('KeyA');
      await page.keyboard.up('Control');
      await page.keyboard.press('Backspace');
      if (value !== '') await page.keyboard.type(value);
    },
    select: async (selector, value) => void (await page.select(selector, value)),
    screenshot: async (path) => void (await page.screenshot({ path, fullPage: true })),
    errors: async () => [...errors],
    close: () => page.close(),
  };
}

function context(pp: PpContext, close: () => Promise<void>): BrowserContext {
  const pages = new Set<Page>();
  let offline = false;
  return {
    async newPage(viewport) {
      const page = await pp.newPage();
      pages.add(page);
      page.once('close', () => pages.delete(page));
      if (viewport) await page.setViewport(viewport);
      if (offline) await page.setOfflineMode(true);
      return browserPage('firefox', pageDriver(page));
    },
    async setOffline(value) {
      offline = value;
      await Promise.all([...pages].map((p) => p.setOfflineMode(value)));
    },
    close,
  };
}

/** Launch headless Firefox ESR (a throwaway on-disk profile, or `profileDir`). */
export async function launchFirefoxBrowser(options: LaunchOptions = {}): Promise<Browser> {
  const [executablePath] = enginePaths('firefox');
  const browser: PpBrowser = await puppeteer.launch({
    browser: 'firefox',
    executablePath,
    headless: true,
    ...(options.profileDir ? { userDataDir: options.profileDir } : {}),
  });
  const version = `Firefox ${(await browser.version()).replace(/^firefox\//i, '')}`;
  return {
    engine: 'firefox',
    version,
    offlineSignal: 'browser',
    async newContext() {
      if (options.profileDir) return context(browser.defaultBrowserContext(), async () => undefined);
      const pp = await browser.createBrowserContext();
      return context(pp, () => pp.close());
    },
    close: () => browser.close().catch(() => undefined),
  };
}
