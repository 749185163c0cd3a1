// The connection form's values, remembered across reloads with idb-keyval (demo convenience only:
// the library itself never writes credentials to IndexedDB).
import { get, set } from 'idb-keyval';
import type { Protocol } from '../src/types.ts';
import { defaults } from './defaults.ts';

/** What the connection form remembers. */
export interface Settings {
  protocol: Protocol;
  baseUrl: string;
  token: string;
  username: string;
  password: string;
  /** `per_page` asked of the server. */
  pageSize: number;
  /** `backgroundSync: true` and the demo's service worker (demo/sw.ts). */
  backgroundSync: boolean;
  /** Connected when the page was left: connect again on load (the local data shows even with the server down). */
  connected: boolean;
}

const KEY = 'opa-sync-demo:settings';
export const DEFAULT_PAGE_SIZE = 50;

/** The saved settings, or the defaults (the local reference server). */
export async function loadSettings(): Promise<Settings> {
  const { protocol, baseUrl, token, username, password } = defaults;
  const fallback: Settings = { protocol, baseUrl, token, username, password, pageSize: DEFAULT_PAGE_SIZE, backgroundSync: false, connected: false };
  try {
    const stored = await get<Partial<Settings>>(KEY);
    // Nothing saved: a first open. Started by `npm run demo`, connect to its server at once.
    const saved: Partial<Settings> = stored ?? { connected: defaults.autoConnect === true };
    const text = (key: 'token' | 'username' | 'password') => (typeof saved[key] === 'string' ? (saved[key] as string) : fallback[key]);
    return {
      protocol: saved.protocol === 'opa' || saved.protocol === 'gpodder' || saved.protocol === 'nextcloud' ? saved.protocol : fallback.protocol,
      baseUrl: typeof saved.baseUrl === 'string' && saved.baseUrl ? saved.baseUrl : fallback.baseUrl,
      token: text('token'),
      username: text('username'),
      password: text('password'),
      pageSize: typeof saved.pageSize === 'number' && saved.pageSize > 0 ? saved.pageSize : fallback.pageSize,
      backgroundSync: saved.backgroundSync === true,
      connected: saved.connected === true,
    };
  } catch {
    return fallback;
  }
}

/** Remember the settings (failures only cost the convenience). */
export async function saveSettings(settings: Settings): Promise<void> {
  await set(KEY, settings).catch(() => undefined);
}
