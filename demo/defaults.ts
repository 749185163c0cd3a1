// What the page fills in before the user has saved anything: the server `npm run demo` started.
import type { Protocol } from '../src/types.ts';

/** Connection defaults handed over by demo/start.ts (a Vite `define`). */
export interface DemoDefaults {
  protocol: Protocol;
  baseUrl: string;
  /** Bearer token (Open Podcast API). */
  token: string;
  /** HTTP Basic credentials (gPodder, Nextcloud). */
  username: string;
  password: string;
  /** Connect on the first open (nothing saved yet): set when `npm run demo` started the page. */
  autoConnect?: boolean;
}

declare const __OPA_DEMO_DEFAULTS__: DemoDefaults | undefined;

/** The local reference server when the page was started by `npm run demo`, else its usual address. */
export const defaults: DemoDefaults =
  typeof __OPA_DEMO_DEFAULTS__ === 'object' && __OPA_DEMO_DEFAULTS__ !== null
    ? __OPA_DEMO_DEFAULTS__
    : { protocol: 'opa', baseUrl: 'http://127.0.0.1:8787/v1', token: 'demo-token', username: 'alice', password: 'alice-password' };
