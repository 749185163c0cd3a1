import { SyncError, type SyncErrorCode } from '../src/errors.ts';
import type { Auth, Clock } from '../src/types.ts';
import { timeoutSignal } from './clock.ts';

/** What the HTTP layer needs from the engine. */
export interface HttpOptions {
  baseUrl: string;
  fetch: typeof fetch;
  /** Where the timeout is measured. */
  clock: Clock;
  /** ms before a request is abandoned. */
  timeout: number;
  auth(): Auth | undefined;
  /** Aborted when the engine closes. */
  signal: AbortSignal;
  /** Called once per request sent (for reports and benchmarks). */
  onRequest?(): void;
  /** Called after any response arrives: the real proof of connectivity. */
  onResponse?(): void;
}

/** A parsed response. */
export interface HttpResponse {
  status: number;
  body: unknown;
}

/** The HTTP layer: JSON requests to the base URL's origin only, typed errors for every failure. */
export interface Http {
  /** An endpoint URL under the base URL. */
  url(path: string, query?: Record<string, string | number | undefined>): URL;
  /** Whether a URL is on the base URL's origin (the only one credentials go to). */
  sameOrigin(url: URL): boolean;
  /** Send a request; resolves for 2xx, throws a `SyncError` for anything else. */
  request(method: string, url: URL, body?: unknown): Promise<HttpResponse>;
}

/** An error body: `{ code, message }`; `code` is declared a string but servers send numbers. */
interface ErrorBody {
  code: string | number;
  message: string;
}

/** Read an error body if it is one; anything else (HTML, nothing) gives undefined. */
export function parseError(value: unknown): ErrorBody | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const o = value as Record<string, unknown>;
  if (typeof o.message !== 'string') return undefined;
  if (typeof o.code !== 'string' && typeof o.code !== 'number') return undefined;
  return { code: o.code, message: o.message };
}

/** Map an HTTP status to an error code. */
export function codeForStatus(status: number): SyncErrorCode {
  if (status === 401 || status === 403) return 'unauthorized';
  if (status === 404) return 'not-found';
  if (status === 410) return 'gone';
  if (status === 408) return 'timeout';
  if (status === 429) return 'rate-limited';
  if (status >= 500) return 'server';
  if (status === 400 || status === 405 || status === 409 || status === 422) return 'invalid';
  return 'bad-response';
}

/** Parse a Retry-After header (seconds or an HTTP date) to a delay in ms. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function base64(text: string): string {
  // btoa alone throws on non-Latin-1 passwords.
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function authHeader(auth: Auth | undefined): [string, string] | undefined {
  if (!auth) return undefined;
  switch (auth.type) {
    case 'bearer':
      return ['Authorization', `Bearer ${auth.token}`];
    case 'basic':
      return ['Authorization', `Basic ${base64(`${auth.username}:${auth.password}`)}`];
    case 'header':
      return [auth.name, auth.value];
  }
}

/** Create the HTTP layer. */
export function createHttp(options: HttpOptions): Http {
  const base = new URL(options.baseUrl.replace(/\/+$/, '') + '/');

  function url(path: string, query: Record<string, string | number | undefined> = {}): URL {
    const result = new URL(path.replace(/^\/+/, ''), base);
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined) result.searchParams.set(key, String(value));
    }
    return result;
  }

  function sameOrigin(target: URL): boolean {
    return target.origin === base.origin;
  }

  async function request(method: string, target: URL, body?: unknown): Promise<HttpResponse> {
    const label = `${method} ${target.pathname}`;
    if (!sameOrigin(target)) throw new SyncError('invalid', `${label}: refusing a request outside ${base.origin}`);
    if (options.signal.aborted) throw new SyncError('closed', `${label}: the engine is closed`);
    const headers = new Headers({ Accept: 'application/json' });
    const auth = authHeader(options.auth());
    if (auth) headers.set(auth[0], auth[1]);
    if (body !== undefined) headers.set('Content-Type', 'application/json');
    const timeout = timeoutSignal(options.clock, options.timeout);
    const signal = AbortSignal.any([options.signal, timeout.signal]);
    options.onRequest?.();
    let response: Response;
    let text: string;
    try {
      response = await options.fetch(target.href, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
        credentials: 'omit',
        cache: 'no-store',
        redirect: 'error',
      });
      text = await response.text();
    } catch (cause) {
      if (options.signal.aborted) throw new SyncError('closed', `${label}: the engine is closed`, { cause });
      if (timeout.signal.aborted) throw new SyncError('timeout', `${label}: no answer within ${options.timeout} ms`, { cause });
      throw new SyncError('network', `${label}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    } finally {
      timeout.clear();
    }
    options.onResponse?.();
    let parsed: unknown;
    let parseFailed = false;
    if (text.trim() !== '') {
      try {
        parsed = JSON.parse(text);
      } catch {
        parseFailed = true;
      }
    }
    if (response.ok) {
      if (parseFailed) throw new SyncError('bad-response', `${label}: the body is not JSON`, { status: response.status });
      return { status: response.status, body: parsed };
    }
    const error = parseError(parsed);
    const message = error?.message ?? (response.statusText || 'request failed');
    throw new SyncError(codeForStatus(response.status), `${label}: ${response.status} ${message}`, {
      status: response.status,
      retryAfter: parseRetryAfter(response.headers.get('Retry-After'), options.clock.now()),
    });
  }

  return { url, sameOrigin, request };
}
