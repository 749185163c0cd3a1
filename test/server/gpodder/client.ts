// A fetch wrapper for tests that talk gPodder over real HTTP, with HTTP Basic by default.
import { toApiResponse, type ApiResponse } from '../client.ts';

/** Per-call options: a JSON body (or `raw` text), other credentials (`null` sends none), extra headers. */
export interface GpodderCallOptions {
  body?: unknown;
  raw?: string;
  auth?: { user: string; password: string } | null;
  headers?: Record<string, string>;
}

/** A caller bound to a server origin and default credentials. */
export type GpodderCall = <T = unknown>(method: string, path: string, opts?: GpodderCallOptions) => Promise<ApiResponse<T>>;

/** The `Authorization` value for Basic credentials. */
export const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** Create a caller for `origin`; `path` is appended to it. */
export function createGpodderApi(origin: string, user = 'alice', password = 'alice-password'): GpodderCall {
  return async <T>(method: string, path: string, opts: GpodderCallOptions = {}): Promise<ApiResponse<T>> => {
    const headers: Record<string, string> = { ...opts.headers };
    const auth = opts.auth === undefined ? { user, password } : opts.auth;
    if (auth !== null) headers.Authorization = basic(auth.user, auth.password);
    const body = opts.body !== undefined ? JSON.stringify(opts.body) : opts.raw;
    return toApiResponse<T>(await fetch(origin + path, { method, headers, body }));
  };
}
