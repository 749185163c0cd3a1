// Launching Debian's Chromium (playwright-core) for the browser suite, the demo check and the benchmarks.
import { chromium, type Browser, type BrowserContext, type LaunchOptions } from 'playwright-core';
import { enginePaths } from './requirements.ts';

/** Flags that keep headless Chromium quiet on a machine with a closed network. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

/** The Chromium to use: `CHROMIUM_PATH`, else Debian's. Throws with the install line when there is none. */
export function chromiumPath(): string {
  return enginePaths('chromium')[0]!;
}

/** Launch headless Chromium (an off-the-record context per `newContext()`). */
export function launchChromium(options: LaunchOptions = {}): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), headless: true, ...options, args: [...CHROMIUM_ARGS, ...(options.args ?? [])] });
}

/** Launch a persistent context with an on-disk profile (real IndexedDB on disk, for figures). */
export function launchPersistent(profileDir: string): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profileDir, { executablePath: chromiumPath(), headless: true, args: CHROMIUM_ARGS });
}
