// Launching Debian's Chromium for the browser suite, the demo check and the benchmarks.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type LaunchOptions } from 'playwright-core';

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

const CANDIDATES = ['/usr/lib/chromium/chromium', '/usr/bin/chromium', '/usr/bin/chromium-browser'];

/** The Chromium to use: `CHROMIUM_PATH`, else Debian's. Throws with the install hint when there is none. */
export function chromiumPath(): string {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`CHROMIUM_PATH=${fromEnv} does not exist`);
    return fromEnv;
  }
  const found = CANDIDATES.find((p) => existsSync(p));
  if (!found) {
    throw new Error(
      'Chromium is required for the browser tests and was not found. Install it with ' +
        '`apt-get update && apt-get install -y chromium` (as root; .ci/run does this), or set CHROMIUM_PATH.',
    );
  }
  return found;
}

/** Launch headless Chromium (an off-the-record context per `newContext()`). */
export function launchChromium(options: LaunchOptions = {}): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), headless: true, ...options, args: [...CHROMIUM_ARGS, ...(options.args ?? [])] });
}

/** Launch a persistent context with an on-disk profile (real IndexedDB on disk, for figures). */
export function launchPersistent(profileDir: string): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profileDir, { executablePath: chromiumPath(), headless: true, args: CHROMIUM_ARGS });
}
