// Driving a page through its UI in any engine: reads are evaluated in the page, actions are the driver's real
// clicks and typing, each after waiting (like a person) until its target is there, visible and enabled.
import type { BrowserPage } from '../../support/browsers.ts';
import { waitFor } from './harness.ts';

/** What a test does with a page's UI; selectors are CSS. */
export interface Ui {
  page: BrowserPage;
  text(selector: string): Promise<string | null>;
  texts(selector: string): Promise<string[]>;
  count(selector: string): Promise<number>;
  attr(selector: string, name: string): Promise<string | null>;
  /** `data-*` values of every match, in document order. */
  dataset(selector: string, key: string): Promise<string[]>;
  value(selector: string): Promise<string | null>;
  /** There, with a box, not `visibility: hidden` (as a person would see it). */
  visible(selector: string): Promise<boolean>;
  enabled(selector: string): Promise<boolean>;
  /** Click `target`: a selector, or a function finding one (asked again should a re-render replace the element). */
  click(target: Target): Promise<void>;
  fill(target: Target, value: string): Promise<void>;
  select(selector: string, value: string): Promise<void>;
  /** Tick or untick a checkbox (by clicking it, only when it is not already so). */
  check(selector: string, on: boolean): Promise<void>;
  /** A selector for the button inside `scope` whose accessible name (aria-label, else text) matches `name`. */
  button(scope: string, name: string | RegExp): Promise<string>;
  /** A selector for the control inside `scope` labelled `label` (by a `<label for>`). */
  labelled(scope: string, label: string): Promise<string>;
}

/** A selector, or a function that finds one now (for elements a re-render may replace). */
export type Target = string | (() => Promise<string>);

const ACTION_WAIT = 15_000;
let marks = 0;

/** The UI helpers for `page`. */
export function ui(page: BrowserPage): Ui {
  /** Wait until the element is visible and enabled; a marked one that is gone (re-rendered away) says so at once. */
  const actionable = (selector: string, marked: boolean) =>
    waitFor(`${selector} to be visible and enabled`, () =>
      page.evaluate(({ s, marked }) => {
        const el = document.querySelector(s) as HTMLInputElement | null;
        if (!el) return marked ? 'gone' : false;
        return el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden' && !el.disabled ? 'ready' : false;
      }, { s: selector, marked }),
    ACTION_WAIT);
  /** Tag the first element `find` returns (evaluated in the page) so a CSS selector can name it. */
  const mark = async (what: string, find: (arg: { scope: string; name: string; flags: string; label: string; tag: string }) => boolean, arg: { scope: string; name: string; flags: string; label: string }) => {
    const tag = `m${++marks}`;
    await waitFor(what, () => page.evaluate(find, { ...arg, tag }), ACTION_WAIT);
    return `[data-ui-mark="${tag}"]`;
  };
  const act = async (target: Target, action: (selector: string) => Promise<void>) => {
    for (let attempt = 1; ; attempt++) {
      const selector = typeof target === 'string' ? target : await target();
      // A re-render may replace the element found: find it again (up to 3 times).
      if ((await actionable(selector, typeof target !== 'string')) === 'gone') {
        if (attempt === 3) throw new Error(`${selector} was re-rendered away three times`);
        continue;
      }
      try {
        return await action(selector);
      } catch (error) {
        if (typeof target === 'string' || attempt === 3) throw error;
      }
    }
  };
  return {
    page,
    text: (s) => page.evaluate((sel) => document.querySelector(sel)?.textContent ?? null, s),
    texts: (s) => page.evaluate((sel) => [...document.querySelectorAll(sel)].map((el) => el.textContent ?? ''), s),
    count: (s) => page.evaluate((sel) => document.querySelectorAll(sel).length, s),
    attr: (s, name) => page.evaluate(({ sel, name }) => document.querySelector(sel)?.getAttribute(name) ?? null, { sel: s, name }),
    dataset: (s, key) => page.evaluate(({ sel, key }) => [...document.querySelectorAll<HTMLElement>(sel)].map((el) => el.dataset[key] ?? ''), { sel: s, key }),
    value: (s) => page.evaluate((sel) => (document.querySelector(sel) as HTMLInputElement | null)?.value ?? null, s),
    visible: (s) =>
      page.evaluate((sel) => {
        const el = document.querySelector(sel);
        return !!el && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
      }, s),
    enabled: (s) => page.evaluate((sel) => !((document.querySelector(sel) as HTMLInputElement | null)?.disabled ?? true), s),
    click: (target) => act(target, (s) => page.click(s)),
    fill: (target, value) => act(target, (s) => page.fill(s, value)),
    async select(s, value) {
      await actionable(s, false);
      await page.select(s, value);
    },
    async check(s, on) {
      await actionable(s, false);
      if ((await page.evaluate((sel) => (document.querySelector(sel) as HTMLInputElement).checked, s)) !== on) await page.click(s);
    },
    button: (scope, name) =>
      mark(
        `a button named ${String(name)} in ${scope}`,
        ({ scope, name, flags, tag }) => {
          const re = flags === 'exact' ? null : new RegExp(name, flags);
          for (const b of document.querySelectorAll(`${scope} button`)) {
            const accessible = (b.getAttribute('aria-label') ?? b.textContent ?? '').trim();
            if (re ? re.test(accessible) : accessible === name) {
              b.setAttribute('data-ui-mark', tag);
              return true;
            }
          }
          return false;
        },
        typeof name === 'string' ? { scope, name, flags: 'exact', label: '' } : { scope, name: name.source, flags: name.flags, label: '' },
      ),
    labelled: (scope, label) =>
      mark(
        `a control labelled ${label} in ${scope}`,
        ({ scope, label, tag }) => {
          for (const l of document.querySelectorAll<HTMLLabelElement>(`${scope} label`)) {
            const control = l.htmlFor ? document.getElementById(l.htmlFor) : null;
            if (l.textContent?.trim() === label && control) {
              control.setAttribute('data-ui-mark', tag);
              return true;
            }
          }
          return false;
        },
        { scope, label, name: '', flags: '' },
      ),
  };
}
