// Launch any engine behind the one Browser interface.
import type { Browser, LaunchOptions } from './driver.ts';
import { launchChromiumBrowser } from './drivers/chromium.ts';
import { launchFirefoxBrowser } from './drivers/firefox.ts';
import { launchWebKitBrowser } from './drivers/webkit.ts';
import type { EngineName } from './engines.ts';

export type { Browser, BrowserContext, BrowserPage, LaunchOptions, OfflineSignal } from './driver.ts';
export { ENGINES, selectedEngines, type EngineName } from './engines.ts';

const LAUNCHERS: Record<EngineName, (options: LaunchOptions) => Promise<Browser>> = {
  chromium: launchChromiumBrowser,
  firefox: launchFirefoxBrowser,
  webkit: launchWebKitBrowser,
};

/** Launch `engine`; throws with the `apt-get install` line when it is not installed (tests fail, never skip). */
export function launchBrowser(engine: EngineName, options: LaunchOptions = {}): Promise<Browser> {
  return LAUNCHERS[engine](options);
}
