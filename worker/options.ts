import { SyncError } from '../src/errors.ts';
import { defaultDbName, normaliseBaseUrl } from '../src/base-url.ts';
import type { Auth, Clock, Protocol, SyncOptions } from '../src/types.ts';
import { clampedTimers, systemClock } from './clock.ts';

/** Options with every default filled in. */
export interface ResolvedOptions {
  protocol: Protocol;
  /** gPodder's device id. */
  device: string;
  /** The base URL normalised (no trailing slash, query or fragment): also the server the store is bound to. */
  baseUrl: string;
  auth?: Auth;
  account?: string;
  dbName: string;
  pageSize: number;
  pullInterval: number;
  pushDelay: number;
  progressInterval: number;
  timeout: number;
  baseDelay: number;
  maxDelay: number;
  concurrency: number;
  fetch: typeof fetch;
  clock: Clock;
  /** Where the engine runs: a tab's worker (it starts with a sync), or a service worker (it pushes what waits). */
  by: 'tab' | 'sw';
}

function positive(name: string, value: number | undefined, fallback: number, min = 0): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
    throw new SyncError('invalid', `${name} must be a number of at least ${min}`);
  }
  return value;
}

/** Check an `Auth` value (it may come from JavaScript or across the worker boundary). */
export function checkAuth(auth: unknown): Auth {
  const a = auth as Partial<Record<string, unknown>> | null;
  const ok =
    typeof a === 'object' &&
    a !== null &&
    ((a.type === 'bearer' && typeof a.token === 'string') ||
      ((a.type === 'basic' || a.type === 'session') && typeof a.username === 'string' && typeof a.password === 'string') ||
      (a.type === 'header' && typeof a.name === 'string' && a.name !== '' && typeof a.value === 'string'));
  if (!ok) throw new SyncError('invalid', "auth must be { type: 'bearer', token } | { type: 'basic' or 'session', username, password } | { type: 'header', name, value }");
  return a as Auth;
}

/**
 * The account credentials name, where the protocol keeps one list per user and knows it by the credentials'
 * user name (gPodder, Nextcloud: Basic auth); undefined where credentials do not say (a token, OPA).
 */
export function authAccount(protocol: Protocol, auth: Auth | undefined): string | undefined {
  return protocol !== 'opa' && (auth?.type === 'basic' || auth?.type === 'session') ? auth.username : undefined;
}

/** Validate options and fill defaults. */
export function resolveOptions(options: SyncOptions): ResolvedOptions {
  if (!options || typeof options.baseUrl !== 'string') throw new SyncError('invalid', 'baseUrl is required');
  let server: string;
  try {
    server = normaliseBaseUrl(options.baseUrl);
  } catch {
    throw new SyncError('invalid', `baseUrl is not a URL: ${options.baseUrl}`);
  }
  // Credentials in the URL would name the IndexedDB database (listable by any script on the origin) and sit
  // in the stored binding: they belong in `auth`, which lives in worker memory only.
  const { username, password } = new URL(server);
  if (username !== '' || password !== '') {
    throw new SyncError('invalid', "baseUrl must not carry credentials (user:password@host): pass them as auth: { type: 'basic', username, password }");
  }
  if (!/^https?:/.test(server)) throw new SyncError('invalid', `baseUrl must be http(s): ${options.baseUrl}`);
  const protocol = options.protocol ?? 'opa';
  if (protocol !== 'opa' && protocol !== 'gpodder' && protocol !== 'nextcloud') throw new SyncError('invalid', `protocol must be 'opa', 'gpodder' or 'nextcloud', not ${String(protocol)}`);
  const device = options.device ?? 'opa-sync';
  if (typeof device !== 'string' || !/^[\w.-]+$/.test(device)) throw new SyncError('invalid', `device must match [\\w.-]+: ${String(device)}`);
  const fetchImpl = options.fetch ?? globalThis.fetch?.bind(globalThis);
  if (typeof fetchImpl !== 'function') throw new SyncError('invalid', 'no fetch available: pass options.fetch');
  const resolved: ResolvedOptions = {
    protocol,
    device,
    baseUrl: server,
    // A gPodder store is not an OPA store of the same server: they never share a database by default.
    dbName: options.dbName ?? (protocol === 'opa' ? defaultDbName(server) : `${defaultDbName(server)}#${protocol}`),
    pageSize: Math.floor(positive('pageSize', options.pageSize, 500, 1)),
    pullInterval: positive('pullInterval', options.pullInterval, 60_000),
    pushDelay: positive('pushDelay', options.pushDelay, 50),
    progressInterval: positive('progressInterval', options.progressInterval, 30_000),
    timeout: positive('timeout', options.timeout, 30_000, 1),
    baseDelay: positive('retry.baseDelay', options.retry?.baseDelay, 1000, 1),
    maxDelay: positive('retry.maxDelay', options.retry?.maxDelay, 300_000, 1),
    concurrency: Math.floor(positive('retry.concurrency', options.retry?.concurrency, 8, 1)),
    fetch: fetchImpl,
    // Every timer the engine sets goes through this clock: clamped here once, none overflows and fires at once.
    clock: clampedTimers(options.clock ?? systemClock),
    by: 'clients' in globalThis ? 'sw' : 'tab',
  };
  if (options.auth !== undefined) resolved.auth = checkAuth(options.auth);
  if (resolved.auth?.type === 'session' && protocol !== 'gpodder') throw new SyncError('invalid', "auth type 'session' is gPodder's login (protocol: 'gpodder'); use 'basic' here");
  // gPodder names the user in its paths (Nextcloud by the credentials) and keeps one list per user: the store
  // belongs to that user, and credentials of another would sync another account's list into it.
  const named = authAccount(protocol, resolved.auth);
  if (options.account !== undefined) resolved.account = String(options.account);
  else if (named !== undefined) resolved.account = named;
  if (named !== undefined && named !== resolved.account) {
    throw new SyncError('invalid', `auth names the user ${named}, but account is ${resolved.account}: they must be the same`);
  }
  return resolved;
}
