// A BrowserPage over an engine's PageDriver: one evaluate for all engines, with the same JSON semantics
// everywhere (a test must not pass in one engine only because its protocol serializes differently).
import type { BrowserPage, PageDriver } from './driver.ts';
import type { EngineName } from './engines.ts';

/** The expression `evaluate` sends: calls `fn` with `arg`, settles to `{ v }` or `{ e }` as a JSON string. */
export function evaluateExpression(fn: (arg: never) => unknown, arg: unknown): string {
  const argument = arg === undefined ? 'undefined' : JSON.stringify(arg);
  return (
    `(async () => (${fn.toString()})(${argument}))().then(` +
    `(v) => JSON.stringify({ v }), ` +
    `(e) => JSON.stringify({ e: String((e && e.stack) || e), m: String((e && e.message) || e) }))`
  );
}

/** Wrap an engine's page driver as a BrowserPage. */
export function browserPage(engine: EngineName, driver: PageDriver): BrowserPage {
  return {
    engine,
    goto: (url) => driver.goto(url),
    reload: () => driver.reload(),
    click: (selector) => driver.click(selector),
    fill: (selector, value) => driver.fill(selector, value),
    select: (selector, value) => driver.select(selector, value),
    screenshot: (path) => driver.screenshot(path),
    errors: () => driver.errors(),
    close: () => driver.close(),
    async evaluate(fn: (arg: never) => unknown, arg?: unknown) {
      const raw = await driver.evaluateString(evaluateExpression(fn, arg));
      const out = JSON.parse(raw) as { v?: unknown; e?: string; m?: string };
      if (out.e !== undefined) throw new Error(`in the ${engine} page: ${out.m}\n${out.e}`);
      return out.v;
    },
  } as BrowserPage;
}
