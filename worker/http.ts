import { SyncError, isSyncError, type SyncErrorCode } from '../src/errors.ts';
import { authHeader } from '../src/auth-header.ts';
import type { LastChanceRequest } from '../src/protocol.ts';
import { requestBase } from '../src/base-url.ts';
import type { Auth, Clock } from '../src/types.ts';
import { MAX_SERVER_DELAY } from './backoff.ts';
import { timeoutSignal } from './clock.ts';
import { MAX_BODY_BYTES, TooLarge, readBounded, readStreaming, type StreamedBody } from './http-body.ts';

/**
 * A request may last this many timeouts in all, however steadily its body comes: the timeout itself measures
 * silence (before the headers, and between parts of the body), so a large answer on a slow link is read, and
 * this bounds one that drips.
 */
export const TIMEOUTS_IN_ALL = 10;

/** What the HTTP layer needs from the engine. */
export interface HttpOptions {
  baseUrl: string;
  fetch: typeof fetch;
  /** Where the timeout is measured. */
  clock: Clock;
  /** ms of silence (no headers yet, or a pause in the body) before a request is abandoned. */
  timeout: number;
  auth(): Auth | undefined;
  /** Aborted when the engine closes. */
  signal: AbortSignal;
  /** Called once per request sent (for reports and benchmarks). */
  onRequest?(): void;
  /** Called after a response from the server arrives (not a gateway's 502/503/504): the real proof of connectivity. */
  onResponse?(): void;
  /** Most bytes of a body read; a longer one is `bad-response`. @default MAX_BODY_BYTES (16 MiB) */
  maxBodyBytes?: number;
}

/** A parsed response; `body` is undefined only for 204 (or when the caller reads none). */
export interface HttpResponse {
  status: number;
  body: unknown;
}

/** How one request's answer is read. */
export interface RequestOptions {
  /** The caller reads nothing of a 2xx answer, so an empty or non-JSON one will do (mygpo answers a device registration with an empty 200). */
  ignoreBody?: boolean;
  /**
   * Hand a 2xx body (but 204) to `write` as its text arrives, up to `limit` bytes, instead of parsing it whole:
   * the answer's `body` is then undefined. What `write` throws ends the request (a `SyncError` keeps its code).
   */
  stream?: { limit: number; write(text: string): void };
  /** These credentials instead of the engine's (a session login's own Basic header). */
  auth?: Auth;
}

/** The HTTP layer: JSON requests to the base URL's origin only, typed errors for every failure. */
export interface Http {
  /** An endpoint URL under the base URL. */
  url(path: string, query?: Record<string, string | number | undefined>): URL;
  /** Whether a URL is on the base URL's origin (the only one credentials go to). */
  sameOrigin(url: URL): boolean;
  /** Send a request; resolves for 2xx, throws a `SyncError` for anything else. */
  request(method: string, url: URL, body?: unknown, options?: RequestOptions): Promise<HttpResponse>;
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

/**
 * A gateway's word that the server behind it is down or overloaded (502, 503, 504; often an HTML error page):
 * an answer from a proxy, not from the server, so the server counts as unreachable, as with a refused connection.
 */
export function isGatewayStatus(status: number | undefined): boolean {
  return status === 502 || status === 503 || status === 504;
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

/**
 * Parse a Retry-After header (seconds or an HTTP date) to a delay in ms, at most `MAX_SERVER_DELAY`. A date
 * is a server time: it is measured from `serverNow`, the response's own `Date` when readable (a device
 * clock an hour off must not turn 10 s into an hour), else the device clock.
 */
export function parseRetryAfter(value: string | null, serverNow = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  let delay: number;
  if (/^\d+(\.\d+)?$/.test(trimmed)) delay = Math.round(Number(trimmed) * 1000);
  else {
    const at = Date.parse(trimmed);
    if (Number.isNaN(at)) return undefined;
    delay = Math.max(0, at - serverNow);
  }
  return Math.min(delay, MAX_SERVER_DELAY);
}

/** The server's clock from a response's `Date` header, or `fallback` when there is none to read (CORS hides it unless exposed). */
export function serverDate(headers: Headers, fallback: number): number {
  const at = Date.parse(headers.get('Date') ?? '');
  return Number.isNaN(at) ? fallback : at;
}

/** The origin a redirect's `Location` names (for the message), or '' when there is none to read. */
function originOf(location: string | null, from: URL): string {
  try {
    return location ? new URL(location, from).origin : '';
  } catch {
    return '';
  }
}

/** Whether a response is a redirect (`redirect: 'manual'`: a browser shows it as an opaque one, status 0). */
function isRedirect(response: Response): boolean {
  return response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400);
}

/**
 * A request as `request` would send it (the same headers, credentials left out) for the page to send itself
 * (see `LastChanceRequest`): `path` relative to the base URL.
 */
export function lastChanceRequest(method: LastChanceRequest['method'], path: string, body?: unknown): LastChanceRequest {
  if (body === undefined) return { method, path, headers: { Accept: 'application/json' } };
  return { method, path, headers: { Accept: 'application/json', 'Content-Type': 'application/json' }, body: JSON.stringify(body) };
}

/** Create the HTTP layer. */
export function createHttp(options: HttpOptions): Http {
  const base = requestBase(options.baseUrl);
  const limit = options.maxBodyBytes ?? MAX_BODY_BYTES;

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

  async function request(method: string, target: URL, body?: unknown, how: RequestOptions = {}): Promise<HttpResponse> {
    const label = `${method} ${target.pathname}`;
    if (!sameOrigin(target)) throw new SyncError('invalid', `${label}: refusing a request outside ${base.origin}`);
    if (options.signal.aborted) throw new SyncError('closed', `${label}: the engine is closed`);
    // Built as the page's last copy builds it: one set of headers for both.
    const built = lastChanceRequest(method as LastChanceRequest['method'], '', body);
    const headers = new Headers(built.headers);
    const auth = authHeader(how.auth ?? options.auth());
    if (auth) headers.set(auth[0], auth[1]);
    const timeout = timeoutSignal(options.clock, options.timeout, options.timeout * TIMEOUTS_IN_ALL);
    const signal = AbortSignal.any([options.signal, timeout.signal]);
    options.onRequest?.();
    let response: Response;
    let read = { text: '', over: false };
    let streamed: StreamedBody | undefined;
    let refused: { error: unknown; status: number } | undefined;
    try {
      response = await options.fetch(target.href, {
        method,
        headers,
        body: built.body,
        signal,
        // `credentials` left at 'same-origin': the origin's own cookies (a gPodder session), never another's.
        cache: 'no-store',
        // Never followed (credentials go to the base origin only), but answered: a redirect is the server's
        // word, not a lost connection, so it is not retried as one.
        redirect: 'manual',
      });
      // The headers came: from here the timeout measures the body's silences.
      timeout.touch();
      if (isRedirect(response)) {
        await response.body?.cancel().catch(() => undefined);
      } else if (how.stream && response.ok && response.status !== 204) {
        const { write } = how.stream;
        streamed = await readStreaming(response, how.stream.limit, (text) => {
          try {
            write(text);
          } catch (error) {
            refused = { error, status: response.status };
            throw error;
          }
        }, timeout.touch);
      }
      else read = await readBounded(response, limit, timeout.touch);
    } catch (cause) {
      if (options.signal.aborted) throw new SyncError('closed', `${label}: the engine is closed`, { cause });
      if (timeout.signal.aborted) throw new SyncError('timeout', `${label}: ${(timeout.signal.reason as Error).message}`, { cause });
      // The stream's reader refused the body (not JSON, not the shape it reads): the server's answer, not a lost connection.
      if (refused) {
        const { error, status } = refused;
        if (isSyncError(error)) throw new SyncError(error.code, `${label}: ${error.message}`, { status, cause: error });
        throw error;
      }
      throw new SyncError('network', `${label}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    } finally {
      timeout.clear();
    }
    const { status } = response;
    if (!isGatewayStatus(status)) options.onResponse?.();
    if (isRedirect(response)) {
      // Not transient: the same request gets the same answer until baseUrl names where the server went.
      const where = originOf(response.headers.get('Location'), target);
      throw new SyncError('bad-response', `${label}: the server redirected${where ? ` to ${where}` : ''} (${status || 'opaque'}); redirects are not followed: set baseUrl to the server's own address`, {
        ...(status && { status }),
      });
    }
    const over = streamed ? streamed.over : response.ok && read.over;
    if (over) throw new TooLarge(`${label}: the body is over ${streamed ? how.stream!.limit : limit} bytes`, { status });
    const blank = streamed ? streamed.blank : read.text.trim() === '';
    if (response.ok && !streamed && (status === 204 || how.ignoreBody)) return { status, body: undefined };
    // Only 204 says "done, nothing to add": an empty 200/201/202 may come from a proxy that never forwarded the
    // request, so it acknowledges nothing.
    if (response.ok && blank) throw new SyncError('bad-response', `${label}: an empty ${status} (only 204 means no content)`, { status });
    let parsed: unknown;
    try {
      if (!blank && !streamed) parsed = JSON.parse(read.text);
    } catch {
      if (response.ok) throw new SyncError('bad-response', `${label}: the body is not JSON`, { status });
    }
    if (response.ok) return { status, body: parsed };
    const error = parseError(parsed);
    const message = error?.message ?? (response.statusText || 'request failed');
    const retryAfter = response.headers.get('Retry-After');
    throw new SyncError(codeForStatus(status), `${label}: ${status} ${message}`, {
      status,
      retryAfter: parseRetryAfter(retryAfter, serverDate(response.headers, options.clock.now())),
    });
  }

  return { url, sameOrigin, request };
}
