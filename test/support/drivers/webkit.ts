// WebKitGTK behind the Browser interface: Debian's WebKitWebDriver driving MiniBrowser over classic WebDriver
// (the `webdriver` package; WebKitWebDriver 2.50 refuses a BiDi session), drawn into an Xvfb of our own.
//
// A WebKitWebDriver process serves one session, and a MiniBrowser automation session starts with empty,
// ephemeral storage: so each context is its own driver process and session (fresh storage, like a new
// profile), and its pages are that session's tabs. Classic WebDriver talks to one window at a time, so every
// page command switches to its tab under a per-session lock.
import { execFileSync, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import type { Client } from 'webdriver';
import type { Browser, BrowserContext, LaunchOptions, PageDriver } from '../driver.ts';
import { browserPage } from '../page.ts';
import { childrenGone, freePort, spawnGroup, stopGroup } from '../processes.ts';
import { enginePaths } from '../requirements.ts';
import { startXvfb, type Display } from '../xvfb.ts';

/** Without a display the session request hangs instead of failing. */
const SESSION_TIMEOUT_MS = 30_000;
const ELEMENT_KEY = 'element-6066-11e4-a52e-4f735466cecf';

/** Page errors, collected by listeners installed after each load (classic WebDriver has no error events). */
const INSTALL_ERROR_LOG = `
  if (!window.__driverErrors) {
    const log = (window.__driverErrors = []);
    addEventListener('error', (e) => log.push('page: ' + (e.error && e.error.message ? e.error.message : e.message)));
    addEventListener('unhandledrejection', (e) => log.push('page: unhandled rejection: ' + (e.reason && e.reason.message ? e.reason.message : String(e.reason))));
  }`;

/** Offline as the page sees it: navigator.onLine and the window's own events (no browser control exists). */
const SET_ONLINE = (online: boolean) => `
  Object.defineProperty(navigator, 'onLine', { configurable: true, get: () => ${online} });
  window.dispatchEvent(new Event('${online ? 'online' : 'offline'}'));`;

async function loadWebdriver(): Promise<typeof import('webdriver').default> {
  // @wdio's loggers read their level when their modules load: quiet them first.
  process.env.WDIO_LOG_LEVEL ??= 'error';
  return (await import('webdriver')).default;
}

async function listening(port: number, driver: ChildProcess, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (driver.exitCode !== null) throw new Error(`WebKitWebDriver exited with ${driver.exitCode}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/status`)).ok) return;
    } catch {
      // Not yet.
    }
    if (Date.now() > deadline) throw new Error(`WebKitWebDriver did not listen on port ${port} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(message)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** One WebKitWebDriver process and its session. */
async function startSession(driverPath: string, miniBrowser: string, display: Display): Promise<{ client: Client; driver: ChildProcess }> {
  const WebDriver = await loadWebdriver();
  const port = await freePort();
  const driver = spawnGroup(driverPath, [`--port=${port}`, '--host=local'], {
    env: { ...process.env, DISPLAY: display.display },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  try {
    await listening(port, driver);
    const client = await withTimeout(
      WebDriver.newSession({
        hostname: '127.0.0.1',
        port,
        path: '/',
        logLevel: 'error',
        connectionRetryCount: 0,
        connectionRetryTimeout: 300_000,
        capabilities: {
          browserName: 'MiniBrowser',
          'wdio:enforceWebDriverClassic': true,
          'webkitgtk:browserOptions': { binary: miniBrowser, args: ['--automation'] },
        } as WebdriverIO.Capabilities,
      }),
      SESSION_TIMEOUT_MS,
      `WebKitWebDriver did not start a MiniBrowser session within ${SESSION_TIMEOUT_MS / 1000} s (DISPLAY=${display.display}: is Xvfb working?)`,
    );
    await client.setTimeouts(0, 60_000, 300_000);
    return { client, driver };
  } catch (error) {
    await stopGroup(driver);
    throw error;
  }
}

function context(client: Client, driver: ChildProcess): BrowserContext {
  // Commands of one session run one at a time, each after switching to its page's tab.
  let queue: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = queue.then(fn, fn);
    queue = run.catch(() => undefined);
    return run;
  };
  const handles = new Set<string>();
  let unusedFirstTab: string | undefined;
  let offline = false;
  let closed = false;

  const initial = client.getWindowHandle().then((h) => (unusedFirstTab = h));

  function pageDriver(handle: string): PageDriver {
    const on = <T>(fn: () => Promise<T>): Promise<T> =>
      exclusive(async () => {
        await client.switchToWindow(handle);
        return fn();
      });
    const element = async (selector: string): Promise<string> => {
      const found = (await client.findElement('css selector', selector)) as Record<string, string>;
      const id = found[ELEMENT_KEY];
      if (!id) throw new Error(`no element matches ${selector}`);
      return id;
    };
    const afterLoad = async () => {
      await client.executeScript(INSTALL_ERROR_LOG, []);
      if (offline) await client.executeScript(SET_ONLINE(false), []);
    };
    return {
      evaluateString: (expression) =>
        on(() => client.executeAsyncScript(`const done = arguments[arguments.length - 1]; (${expression}).then(done);`, []) as Promise<string>),
      goto: (url) =>
        on(async () => {
          await client.navigateTo(url);
          await afterLoad();
        }),
      reload: () =>
        on(async () => {
          await client.refresh();
          await afterLoad();
        }),
      click: (selector) => on(async () => client.elementClick(await element(selector))),
      fill: (selector, value) =>
        on(async () => {
          // Select all (Control+a; modifiers are released at the end of each call), delete, type: keystrokes fire
          // input events, which WebDriver's Element Clear does not in WebKitGTK.
          const id = await element(selector);
          await client.elementSendKeys(id, '\uE009a');
          await client.elementSendKeys(id, '\uE003');
          if (value !== '') await client.elementSendKeys(id, value);
        }),
      select: (selector, value) =>
        on(async () => {
          // An option's value may be its text (no value attribute): find it by its value property.
          const marked = await client.executeScript(
            'const o = [...document.querySelector(arguments[0]).options].find((x) => x.value === arguments[1]); if (o) o.setAttribute("data-driver-option", "1"); return !!o;',
            [selector, value],
          );
          if (!marked) throw new Error(`no option ${value} in ${selector}`);
          await client.elementClick(await element(`${selector} option[data-driver-option]`));
          await client.executeScript('document.querySelector(arguments[0] + " option[data-driver-option]").removeAttribute("data-driver-option")', [selector]);
        }),
      screenshot: (path) => on(async () => writeFile(path, Buffer.from(await client.takeScreenshot(), 'base64'))),
      errors: () => on(async () => ((await client.executeScript('return window.__driverErrors || []', [])) as string[]) ?? []),
      close: () =>
        on(async () => {
          handles.delete(handle);
          // Closing the last tab would end the session (and the context): park it on a blank page instead,
          // for the next newPage().
          if (handles.size === 0) {
            await client.navigateTo('about:blank');
            unusedFirstTab = handle;
          } else await client.closeWindow();
        }),
    };
  }

  return {
    async newPage(viewport) {
      await initial;
      const handle = await exclusive(async () => {
        if (unusedFirstTab) {
          const first = unusedFirstTab;
          unusedFirstTab = undefined;
          return first;
        }
        // A closed tab may have been the session's current one, and a new tab cannot be made from a closed one.
        const open = [...handles][0];
        if (open) await client.switchToWindow(open);
        return (await client.createWindow('tab')).handle;
      });
      handles.add(handle);
      if (viewport) {
        await exclusive(async () => {
          await client.switchToWindow(handle);
          await client.setWindowRect(null, null, viewport.width, viewport.height);
        });
      }
      return browserPage('webkit', pageDriver(handle));
    },
    async setOffline(value) {
      offline = value;
      for (const handle of handles) {
        await exclusive(async () => {
          await client.switchToWindow(handle);
          await client.executeScript(SET_ONLINE(!value), []);
        });
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await exclusive(() => withTimeout(client.deleteSession(), 15_000, 'deleteSession timed out')).catch(() => undefined);
      // MiniBrowser and its web/network processes end with the session: let their parents reap them before
      // the driver goes, or they would be left to init as zombies.
      if (driver.pid !== undefined) await childrenGone(driver.pid, 5000);
      await stopGroup(driver);
    },
  };
}

function version(miniBrowser: string, display: Display): string {
  try {
    const out = execFileSync(miniBrowser, ['--version'], { encoding: 'utf8', env: { ...process.env, DISPLAY: display.display }, stdio: ['ignore', 'pipe', 'ignore'] });
    return out.trim() || 'WebKitGTK (version unknown)';
  } catch {
    return 'WebKitGTK (version unknown)';
  }
}

/**
 * Start an Xvfb for WebKitGTK's MiniBrowser; each context is a WebKitWebDriver session of its own. MiniBrowser
 * in automation mode keeps storage in memory (an ephemeral session), so `profileDir` cannot be honoured.
 */
export async function launchWebKitBrowser(_options: LaunchOptions = {}): Promise<Browser> {
  const [driverPath, miniBrowser, xvfbPath] = enginePaths('webkit') as [string, string, string];
  const display = await startXvfb(xvfbPath);
  const contexts = new Set<BrowserContext>();
  return {
    engine: 'webkit',
    version: version(miniBrowser, display),
    offlineSignal: 'events',
    async newContext() {
      const { client, driver } = await startSession(driverPath, miniBrowser, display);
      const made = context(client, driver);
      contexts.add(made);
      return {
        ...made,
        async close() {
          contexts.delete(made);
          await made.close();
        },
      };
    },
    async close() {
      await Promise.all([...contexts].map((c) => c.close()));
      contexts.clear();
      await display.close();
    },
  };
}
