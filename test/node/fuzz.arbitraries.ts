// What the fuzz tests (fuzz.*.test.ts) share: fixed fast-check parameters (a failure names its seed and path,
// and the same run repeats on any machine), hostile values a server can send, near-valid shapes with one
// field spoiled, and an HTTP layer over a fetch that answers whatever a property says (no sockets: the
// properties run hundreds of cases in well under a second). Not a test file itself.
import fc from 'fast-check';
import { isSyncError, type SyncError } from '../../src/errors.ts';
import type { Clock } from '../../src/types.ts';
import { createHttp, type Http } from '../../worker/http.ts';

/** Every property runs with these: a fixed seed (reproducible), few enough runs that `npm test` stays fast. */
export const FUZZ = { seed: 0x16_2026, numRuns: 150 } as const;
/** For properties that build an HTTP layer and a transport per case. */
export const FUZZ_IO = { seed: 0x16_2026, numRuns: 60 } as const;

/** The app's own rule for a feed address, applied to what a server sends: trimmed, absolute, http(s). */
export function isSafeFeedUrl(value: unknown): boolean {
  if (typeof value !== 'string' || value !== value.trim() || value === '') return false;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** What a validator may do with hostile input: return a clean value, or throw a `bad-response` SyncError. */
export function outcome<T>(parse: () => T): { ok: true; value: T } | { ok: false; error: SyncError } {
  try {
    return { ok: true, value: parse() };
  } catch (error) {
    if (isSyncError(error) && error.code === 'bad-response') return { ok: false, error };
    // Anything else (a TypeError, a RangeError, a SyncError of another code) is the finding.
    throw error;
  }
}

/** Valid http(s) feed URLs. */
export const feedUrl: fc.Arbitrary<string> = fc.oneof(
  fc.webUrl({ validSchemes: ['http', 'https'] }).filter(isSafeFeedUrl),
  fc.nat(10_000).map((n) => `https://feeds.example/f${n}.xml`),
);

/** Feed URLs a hostile or sloppy server sends: other schemes, white space around, not URLs at all. */
export const badFeedUrl: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    'javascript:alert(document.cookie)',
    'JavaScript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'vbscript:msgbox(1)',
    'file:///etc/passwd',
    'ftp://feeds.example/f.xml',
    'blob:https://feeds.example/0',
    'about:blank',
    '//feeds.example/f.xml',
    '/relative/feed.xml',
    'feeds.example/f.xml',
    '',
    ' ',
  ),
  feedUrl.chain((u) => fc.constantFrom(` ${u}`, `${u} `, `\n${u}`, `${u}\t`, ` ${u} `)),
  fc.string(),
);

/** Guids, including the dot segments that change a request's path and other path trouble. */
export const guid: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('.', '..', '%2e', '%2E%2e', '.%2e', './..', '../x', 'a/b', '?x', '#x', ' ', 'a b'),
  fc.uuid(),
  fc.string({ minLength: 1 }),
);

/** Server timestamps the way servers write them (ISO 8601 with and without zone, milliseconds, offsets). */
export const isoTimestamp: fc.Arbitrary<string> = fc
  .tuple(fc.date({ min: new Date(Date.UTC(1971, 0, 1)), max: new Date(Date.UTC(9998, 11, 31)), noInvalidDate: true }), fc.constantFrom('Z', '', '+00:00', '+0000', '.000Z', 'ms'))
  .map(([d, style]) => {
    const iso = d.toISOString();
    if (style === 'ms' || style === '.000Z') return iso;
    return `${iso.slice(0, 19)}${style}`;
  });

/** Strings that look like timestamps but are not (or are at the edges of what a Date holds). */
export const badTimestamp: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '2026-13-01T00:00:00Z',
    '2026-02-30T00:00:00Z',
    '2026-01-01T25:00:00Z',
    '2026-01-01T00:61:00Z',
    '2026-01-01T00:00:00+99:99',
    '+275760-09-13T00:00:00Z',
    '-000001-01-01T00:00:00Z',
    '0000-01-01T00:00:00Z',
    '9999-12-31T23:59:59.999-23:59',
    '1e300',
    'NaN',
    'now',
    '',
  ),
  fc.string(),
);

/** Numbers a JSON body can carry that break naive code: huge, negative, fractional, and (from `1e400`) Infinity. */
export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(1e300, -1e300, Infinity, -Infinity, NaN, -1, -0, 0.5, 2 ** 31, 2 ** 53, 2 ** 53 + 2, 8.64e15, 8.64e12 + 1, Number.MAX_VALUE, Number.MIN_VALUE),
  fc.double(),
  fc.integer(),
);

/** Any value a field might hold instead of the right one. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue(),
  hostileNumber,
  badFeedUrl,
  badTimestamp,
  guid,
  fc.constantFrom(undefined, null, true, false, '', [], {}, [null], { length: 1 }),
);

/** Wrong values aimed at a field by its name (both protocols' field names), beside any hostile value. */
const AIMED: Record<string, fc.Arbitrary<unknown>> = {
  feed_url: badFeedUrl,
  new_feed_url: badFeedUrl,
  guid: guid,
  new_guid: guid,
  subscription_changed: badTimestamp,
  guid_changed: badTimestamp,
  deleted: badTimestamp,
  total: hostileNumber,
  page: hostileNumber,
  per_page: hostileNumber,
  deletion_id: hostileNumber,
  timestamp: hostileNumber,
  add: fc.array(fc.oneof(badFeedUrl, feedUrl), { minLength: 1, maxLength: 3 }),
  remove: fc.array(fc.oneof(badFeedUrl, feedUrl), { minLength: 1, maxLength: 3 }),
  update_urls: fc.array(fc.tuple(feedUrl, fc.oneof(badFeedUrl, feedUrl)), { minLength: 1, maxLength: 3 }),
};

/** A valid object with one field spoiled: replaced by a wrong value (aimed at it by its name, or any), deleted, or joined by a stray one. */
export function oneFieldWrong<T extends object>(valid: fc.Arbitrary<T>): fc.Arbitrary<unknown> {
  return fc.tuple(valid, fc.nat(), fc.constantFrom('aimed', 'aimed', 'replace', 'delete', 'add')).chain(([obj, i, how]) => {
    const copy: Record<string, unknown> = { ...(obj as Record<string, unknown>) };
    const keys = Object.keys(copy);
    const key = keys.length && how !== 'add' ? keys[i % keys.length]! : `extra${i % 3}`;
    if (how === 'delete') {
      delete copy[key];
      return fc.constant(copy);
    }
    const wrong = how === 'aimed' && AIMED[key] ? AIMED[key] : hostileValue;
    return wrong.map((value) => ({ ...copy, [key]: value }));
  });
}

/** A list of valid items with one spoiled item put in somewhere. */
export function oneItemWrong<T extends object>(items: fc.Arbitrary<T[]>, item: fc.Arbitrary<T>): fc.Arbitrary<unknown[]> {
  return fc.tuple(items, oneFieldWrong(item), fc.nat()).map(([list, bad, i]) => {
    const out: unknown[] = [...list];
    out.splice(i % (out.length + 1), 0, bad);
    return out;
  });
}

/** Arbitrary JSON, near-valid shapes of `valid`, and the shapes themselves. */
export function serverBody<T extends object>(valid: fc.Arbitrary<T>): fc.Arbitrary<unknown> {
  return fc.oneof({ arbitrary: fc.jsonValue(), weight: 2 }, { arbitrary: hostileValue, weight: 1 }, { arbitrary: oneFieldWrong(valid), weight: 4 }, { arbitrary: valid, weight: 2 });
}

/** A clock that never moves and never fires (the fuzzed requests answer at once). */
export const stillClock: Clock = {
  now: () => Date.UTC(2026, 0, 1),
  monotonic: () => 0,
  setTimeout: () => 0,
  clearTimeout: () => undefined,
  random: () => 0.5,
};

/** One answer a fuzzed server gives. */
export interface FuzzAnswer {
  status: number;
  /** The body text ('' for none). */
  text: string;
  headers?: Record<string, string>;
}

/** One request the engine made. */
export interface FuzzRequest {
  method: string;
  url: URL;
  body: unknown;
}

export const BASE_URL = 'http://127.0.0.1:9/v1';

/** The engine's HTTP layer over a fetch whose answers `answer` makes up (no sockets). */
export function fuzzHttp(answer: (req: FuzzRequest, n: number) => FuzzAnswer, clock: Clock = stillClock, baseUrl = BASE_URL): { http: Http; requests: FuzzRequest[] } {
  const requests: FuzzRequest[] = [];
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const req: FuzzRequest = { method: (init?.method ?? 'GET').toUpperCase(), url, body: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined };
    requests.push(req);
    const a = answer(req, requests.length);
    const nullBody = a.status === 204 || a.status === 205 || a.status === 304;
    return new Response(nullBody || a.text === '' ? null : a.text, { status: a.status, headers: a.headers });
  }) as typeof globalThis.fetch;
  const http = createHttp({ baseUrl, fetch, clock, timeout: 60_000, auth: () => undefined, signal: new AbortController().signal });
  return { http, requests };
}

/** A body text for a value: its JSON (Infinity as `1e400`, which JSON.parse reads back as Infinity), or nothing for undefined. */
export function asText(value: unknown): string {
  if (value === undefined) return '';
  const marked = JSON.stringify(value, (_key, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? `\u0000num:${v}` : v));
  return marked.replace(/"\\u0000num:(-?Infinity|NaN)"/g, (_m, n: string) => (n === 'NaN' ? 'null' : n.startsWith('-') ? '-1e400' : '1e400'));
}
