import { ForeignError } from './foreign.ts';
import { parseJson, type Reply } from './http.ts';
import type { FaultMatch, FaultOptions, ForeignPatch, RefServer } from './types.ts';
import { isObject } from './validate.ts';

/** What the admin route may drive: the server's controls without its lifecycle. */
export type Control = Omit<RefServer, 'url' | 'origin' | 'port' | 'close'>;

class BadInput extends Error {}

type Body = Record<string, unknown>;

const need = <T>(value: T | undefined, what: string): T => {
  if (value === undefined) throw new BadInput(what);
  return value;
};
const num = (b: Body, key: string, fallback?: number): number => {
  const v = b[key] ?? fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new BadInput(`${key} must be a number >= 0`);
  return v;
};
const str = (b: Body, key: string): string | undefined => {
  const v = b[key];
  if (v !== undefined && typeof v !== 'string') throw new BadInput(`${key} must be a string`);
  return v;
};
const bool = (b: Body, key: string): boolean | undefined => {
  const v = b[key];
  if (v !== undefined && typeof v !== 'boolean') throw new BadInput(`${key} must be a boolean`);
  return v;
};

/** `method`, `path` (exact) or `pathPattern` (a RegExp source) from an admin body. */
function faultMatch(b: Body): FaultMatch | undefined {
  const method = str(b, 'method');
  const pattern = str(b, 'pathPattern');
  const path = pattern !== undefined ? new RegExp(pattern) : str(b, 'path');
  return method === undefined && path === undefined ? undefined : { method, path };
}

/** Create the `/__admin/...` handler: no token, not logged, never faulted. */
export function createAdmin(control: Control): (method: string, path: string, text: string) => Reply {
  const routes: Record<string, (b: Body, arg: string) => unknown> = {
    'POST /reset': () => control.reset(),
    'POST /seed': (b) => ({ seeded: control.seed(num(b, 'n')).length }),
    'GET /state': () => control.state(),
    'GET /entry': (_b, guid) => {
      const view = control.entry(guid);
      if (!view) throw new ForeignError(404, 'Resource not found');
      return view;
    },
    'GET /log': () => control.log(),
    'DELETE /log': () => control.clearLog(),
    'POST /fail': (b) => {
      const opts: FaultOptions = {
        retryAfter: typeof b.retryAfter === 'number' ? b.retryAfter : str(b, 'retryAfter'),
        body: str(b, 'body'),
        contentType: str(b, 'contentType'),
        afterHandling: bool(b, 'afterHandling'),
      };
      const status = num(b, 'status');
      if (!Number.isInteger(status) || status < 200 || status > 599) throw new BadInput('status must be 200-599');
      control.failNext(num(b, 'count', 1), status, faultMatch(b), opts);
    },
    'POST /drop': (b) => control.dropNext(num(b, 'count', 1), faultMatch(b), { afterHandling: bool(b, 'afterHandling') }),
    'POST /malform': (b) =>
      control.malformNext(num(b, 'count', 1), faultMatch(b), str(b, 'body'), { afterHandling: bool(b, 'afterHandling') }),
    'POST /clear-faults': () => control.clearFaults(),
    'POST /latency': (b) => control.setLatency(num(b, 'ms')),
    'POST /reorder': (b) => control.reorder(num(b, 'count', 1)),
    'POST /deletion-outcome': (b) => {
      const outcome = b.outcome;
      if (outcome !== 'success' && outcome !== 'failure') throw new BadInput("outcome must be 'success' or 'failure'");
      control.deletionOutcome(outcome, b.count === undefined ? undefined : num(b, 'count'));
    },
    'POST /deletion-delay': (b) => control.setDeletionDelay(num(b, 'ms')),
    'POST /error-code-as-string': (b) => control.errorCodeAsString(need(bool(b, 'on'), 'on must be a boolean')),
    'POST /foreign': (b) => {
      const guid = str(b, 'guid');
      if (b.op === 'add') return control.foreign.add(need(str(b, 'feed_url'), 'feed_url is required'), guid);
      if (b.op === 'patch') return control.foreign.patch(need(guid, 'guid is required'), need(b.body, 'body is required') as ForeignPatch);
      if (b.op === 'remove') return control.foreign.remove(need(guid, 'guid is required'));
      throw new BadInput("op must be 'add', 'patch' or 'remove'");
    },
  };

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
      if (err instanceof ForeignError) return { status: err.status, body: { code: err.status, message: err.message } };
      if (err instanceof BadInput || err instanceof SyntaxError || err instanceof URIError) {
        return { status: 400, body: { code: 400, message: err.message } };
      }
      throw err;
    }
  };
}
