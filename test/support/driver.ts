// The one browser interface the tests use, whatever engine and automation protocol sit behind it: Playwright
// (Chromium), puppeteer-core over WebDriver BiDi (Firefox), classic WebDriver (WebKitGTK's MiniBrowser).
import type { EngineName } from './engines.ts';

/** How a context's `setOffline` reaches its pages. */
export type OfflineSignal =
  /** The browser's own network emulation: `navigator.onLine`, the events, and failing requests. */
  | 'browser'
  /** `navigator.onLine` overridden and `offline`/`online` dispatched on each page's window (no browser control exists). */
  | 'events';

/** What an engine's driver implements for one page (a tab or window); `page.ts` builds the rest on it. */
export interface PageDriver {
  /** Evaluate `expression` (whose value is a Promise of a string) in the page and resolve with that string. */
  evaluateString(expression: string): Promise<string>;
  goto(url: string): Promise<void>;
  reload(): Promise<void>;
  /** A real click (scrolled into view) on the first element matching `selector`. */
  click(selector: string): Promise<void>;
  /** Replace the value of an input by typing `value` into it. */
  fill(selector: string, value: string): Promise<void>;
  /** Choose the option with `value` in a select. */
  select(selector: string, value: string): Promise<void>;
  /** A PNG of the page (the whole page where the engine can, else the viewport). */
  screenshot(path: string): Promise<void>;
  /** Uncaught errors the page reported so far (as the driver can see them). */
  errors(): Promise<string[]>;
  close(): Promise<void>;
}

/** One page: JSON in, JSON out, whatever the engine. */
export interface BrowserPage extends Omit<PageDriver, 'evaluateString'> {
  readonly engine: EngineName;
  /** Run `fn` in the page with `arg` (JSON) and resolve with its JSON result (a promise is awaited). */
  evaluate<R>(fn: () => R | Promise<R>): Promise<R>;
  evaluate<A, R>(fn: (arg: A) => R | Promise<R>, arg: A): Promise<R>;
}

/** A set of pages that share storage, Web Locks and BroadcastChannel (a profile); fresh storage when made. */
export interface BrowserContext {
  newPage(viewport?: { width: number; height: number }): Promise<BrowserPage>;
  /** Take the context's pages off the network, or back (see `OfflineSignal`). */
  setOffline(offline: boolean): Promise<void>;
  close(): Promise<void>;
}

/** A launched engine. */
export interface Browser {
  readonly engine: EngineName;
  /** Product and version, e.g. `Chromium 156.0.8078.79`. */
  readonly version: string;
  readonly offlineSignal: OfflineSignal;
  newContext(): Promise<BrowserContext>;
  /** Close every context and end every process the engine started. */
  close(): Promise<void>;
}

/** Options of a launch. */
export interface LaunchOptions {
  /**
   * Keep the profile (IndexedDB included) in this directory instead of a throwaway one: the bench's on-disk
   * storage. Contexts then share it (only one context can be made where the engine has one profile per launch).
   */
  profileDir?: string;
}
