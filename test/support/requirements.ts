// What the test suite needs from the machine, as Debian packages: the three browsers, Xvfb for WebKit's
// MiniBrowser, and PHP with SQLite (the opodsync interop tests). The setup step and the drivers share it.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { EngineName } from './engines.ts';

/** One thing the suite needs, the Debian packages that bring it, and where it was found. */
export interface Requirement {
  name: string;
  packages: string[];
  /** The environment variable that names its path instead, if any. */
  envVar?: string;
  /** The path found, or undefined when it is missing. */
  find(): string | undefined;
}

const first = (paths: string[]): string | undefined => paths.find((p) => existsSync(p));

/** An explicit path from the environment wins (and must exist); else the first candidate that does. */
function fromEnvOr(variable: string, candidates: string[]): string | undefined {
  const given = process.env[variable];
  if (given) return existsSync(given) ? given : undefined;
  return first(candidates);
}

export const CHROMIUM: Requirement = {
  envVar: 'CHROMIUM_PATH',
  name: 'Chromium',
  packages: ['chromium'],
  find: () => fromEnvOr('CHROMIUM_PATH', ['/usr/lib/chromium/chromium', '/usr/bin/chromium', '/usr/bin/chromium-browser']),
};

export const FIREFOX: Requirement = {
  envVar: 'FIREFOX_PATH',
  name: 'Firefox ESR',
  packages: ['firefox-esr'],
  find: () => fromEnvOr('FIREFOX_PATH', ['/usr/bin/firefox-esr', '/usr/lib/firefox-esr/firefox-esr']),
};

/** WebKitGTK's WebDriver and the MiniBrowser it drives (both in Debian's webkit2gtk-driver). */
export const WEBKIT_DRIVER: Requirement = {
  envVar: 'WEBKIT_WEBDRIVER_PATH',
  name: 'WebKitWebDriver',
  packages: ['webkit2gtk-driver'],
  find: () => fromEnvOr('WEBKIT_WEBDRIVER_PATH', ['/usr/bin/WebKitWebDriver']),
};

export const MINIBROWSER: Requirement = {
  envVar: 'WEBKIT_MINIBROWSER_PATH',
  name: 'MiniBrowser',
  packages: ['webkit2gtk-driver'],
  find: () =>
    fromEnvOr('WEBKIT_MINIBROWSER_PATH', [
      '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser',
      '/usr/lib/aarch64-linux-gnu/webkit2gtk-4.1/MiniBrowser',
      '/usr/libexec/webkit2gtk-4.1/MiniBrowser',
    ]),
};

/** MiniBrowser has no headless mode: it draws into a virtual X server. */
export const XVFB: Requirement = {
  name: 'Xvfb',
  packages: ['xvfb'],
  find: () => first(['/usr/bin/Xvfb']),
};

export const PHP_SQLITE: Requirement = {
  name: 'PHP with SQLite',
  packages: ['php-cli', 'php-sqlite3'],
  find() {
    const php = first(['/usr/bin/php']);
    if (!php) return undefined;
    try {
      execFileSync(php, ['-r', 'exit(class_exists("SQLite3") && extension_loaded("pdo_sqlite") ? 0 : 1);'], { stdio: 'ignore' });
      return php;
    } catch {
      return undefined;
    }
  },
};

/** What each engine's tests need. */
export const ENGINE_REQUIREMENTS: Record<EngineName, Requirement[]> = {
  chromium: [CHROMIUM],
  firefox: [FIREFOX],
  webkit: [WEBKIT_DRIVER, MINIBROWSER, XVFB],
};

/** The one command that installs `requirements`. */
export function installLine(requirements: Requirement[]): string {
  return `apt-get install -y ${[...new Set(requirements.flatMap((r) => r.packages))].join(' ')}`;
}

/** The paths an engine needs; throws the install line when one is missing (a test must fail, never skip). */
export function enginePaths(engine: EngineName): string[] {
  const needed = ENGINE_REQUIREMENTS[engine];
  const missing = needed.filter((r) => !r.find());
  const misnamed = missing.filter((r) => r.envVar && process.env[r.envVar]);
  if (misnamed.length) throw new Error(misnamed.map((r) => `${r.envVar}=${process.env[r.envVar!]} does not exist`).join('; '));
  if (missing.length) {
    throw new Error(
      `${missing.map((r) => r.name).join(' and ')} ${missing.length > 1 ? 'are' : 'is'} required for the ${engine} browser tests ` +
        `and ${missing.length > 1 ? 'were' : 'was'} not found. Install with: ${installLine(missing)} ` +
        `(as root, after apt-get update; \`npm test\` does this by itself when run as root)`,
    );
  }
  return needed.map((r) => r.find()!);
}
