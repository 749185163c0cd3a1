// What every `/__admin` surface shares: reading a JSON body's fields, fault selectors, and the dispatch.
import { parseJson, type Reply } from './http.ts';
import type { FaultMatch, FaultOptions, RefServer } from './types.ts';
import { isObject } from './validate.ts';

/** An admin body that does not say what the route needs: a 400. */
export class BadInput extends Error {}

/** A parsed admin body. */
export type AdminBody = Record<string, unknown>;

/** One admin route: the body and the rest of the path (decoded) in, a JSON-able result out. */
export type AdminRoute = (b: AdminBody, arg: string) => unknown;

/** `value`, or a BadInput saying `what` when it is undefined. */
export const need = <T>(value: T | undefined, what: string): T => {
  if (value === undefined) throw new BadInput(what);
  return value;
};
/** A number >= 0 under `key` (or `fallback` when absent). */
export const num = (b: AdminBody, key: string, fallback?: number): number => {
  const v = b[key] ?? fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new BadInput(`${key} must be a number >= 0`);
  return v;
};
/** An optional string under `key`. */
export const str = (b: AdminBody, key: string): string | undefined => {
  const v = b[key];
  if (v !== undefined && typeof v !== 'string') throw new BadInput(`${key} must be a string`);
  return v;
};
/** An optional boolean under `key`. */
export const bool = (b: AdminBody, key: string): boolean | undefined => {
  const v = b[key];
  if (v !== undefined && typeof v !== 'boolean') throw new BadInput(`${key} must be a boolean`);
  return v;
};
/** An optional list of strings under `key`. */
export const strings = (b: AdminBody, key: string): string[] | undefined => {
  const v = b[key];
  if (v !== undefined && (!Array.isArray(v) || !v.every((s) => typeof s === 'string'))) throw new BadInput(`${key} must be a list of strings`);
  return v as string[] | undefined;
};

/** `method`, `path` (exact) or `pathPattern` (a RegExp source) from an admin body. */
function faultMatch(b: AdminBody): FaultMatch | undefined {
  const method = str(b, 'method');
  const pattern = str(b, 'pathPattern');
  const path = pattern !== undefined ? new RegExp(pattern) : str(b, 'path');
  return method === undefined && path === undefined ? undefined : { method, path };
}

/** The options of a `fail` fault from an admin body. */
function failOptions(b: AdminBody): FaultOptions {
  return {
    retryAfter: typeof b.retryAfter === 'number' ? b.retryAfter : str(b, 'retryAfter'),
    body: str(b, 'body'),
    contentType: str(b, 'contentType'),
    afterHandling: bool(b, 'afterHandling'),
  };
}

/** A `fail` fault's status from an admin body: 200-599. */
function failStatus(b: AdminBody): number {
  const status = num(b, 'status');
  if (!Number.isInteger(status) || status < 200 || status > 599) throw new BadInput('status must be 200-599');
  return status;
}

/** Something a route refuses with an HTTP status (an unknown entry, a refused change). */
export interface StatusError extends Error {
  status: number;
}

/** Dispatch `METHOD /name/rest...` to `routes`; `refusal` recognises errors that carry their own status. */
export function createAdminDispatch(
  routes: Record<string, AdminRoute>,
  refusal: (err: unknown) => err is StatusError,
): (method: string, path: string, text: string) => Reply {
  return (method, path, text) => {
    const [, name = '', ...rest] = path.split('/');
    const route = routes[`${method} /${name}`];
    if (!route) return { status: 404, body: { code: 404, message: `No admin route ${method} ${path}` } };
    const parsed = text.trim() === '' ? { value: {} } : parseJson(text);
    if (!parsed || !isObject(parsed.value)) return { status: 400, body: { code: 400, message: 'Body must be a JSON object' } };
    try {
      const result = route(parsed.value, decodeURIComponent(rest.join('/')));
      return { status: 200, body: result ?? { ok: true } };
    } catch (err) {
      if (refusal(err)) return { status: err.status, body: { code: err.status, message: err.message } };
      if (err instanceof BadInput || err instanceof SyntaxError || err instanceof URIError) {
        return { status: 400, body: { code: 400, message: err.message } };
      }
      throw err;
    }
  };
}

/** The controls every admin surface drives the same way: faults, latency, the request log. */
export type SharedControls = Pick<RefServer, 'failNext' | 'dropNext' | 'malformNext' | 'clearFaults' | 'setLatency' | 'log' | 'clearLog'>;

/** The admin routes for `SharedControls`. */
export function sharedRoutes(control: SharedControls): Record<string, AdminRoute> {
  return {
    'GET /log': () => control.log(),
    'DELETE /log': () => control.clearLog(),
    'POST /fail': (b) => control.failNext(num(b, 'count', 1), failStatus(b), faultMatch(b), failOptions(b)),
    'POST /drop': (b) => control.dropNext(num(b, 'count', 1), faultMatch(b), { afterHandling: bool(b, 'afterHandling') }),
    'POST /malform': (b) =>
      control.malformNext(num(b, 'count', 1), faultMatch(b), str(b, 'body'), { afterHandling: bool(b, 'afterHandling') }),
    'POST /clear-faults': () => control.clearFaults(),
    'POST /latency': (b) => control.setLatency(num(b, 'ms')),
  };
}
