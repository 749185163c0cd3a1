// Property tests of the gPodder wire validators (worker/gpodder/wire.ts) and the gPodder transport over the
// real HTTP layer with made-up answers: any JSON gives a clean value or SyncError('bad-response'); a clean
// `timestamp` is a time the engine can store and format; what reaches the store is a trimmed http(s) URL whose
// row is named by it; a pull's cursor follows the server's clock down as well as up; a 413 splits an upload.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSyncError } from '../../src/errors.ts';
import type { StoredChange } from '../../src/schema.ts';
import { createGpodderTransport } from '../../worker/gpodder/transport.ts';
import { parseChanges, parseUploaded } from '../../worker/gpodder/wire.ts';
import type { Http } from '../../worker/http.ts';
import type { PullSink, RemoteEntry, SendItem, Transport } from '../../worker/transport.ts';
import { sendAll } from './send-all.ts';
import { asText, badFeedUrl, feedUrl, FUZZ, FUZZ_IO, fuzzHttp, hostileNumber, hostileValue, isSafeFeedUrl, outcome, serverBody, type FuzzAnswer } from './fuzz.arbitraries.ts';

/** Whole seconds of a server clock that a Date holds (up to year 9999). */
const seconds = fc.integer({ min: 0, max: 253_402_300_799 });
const validChanges = fc.record(
  { add: fc.uniqueArray(feedUrl, { maxLength: 4 }), remove: fc.uniqueArray(feedUrl, { maxLength: 3 }), timestamp: seconds, update_urls: fc.array(fc.tuple(feedUrl, feedUrl), { maxLength: 2 }) },
  { requiredKeys: ['add', 'remove', 'timestamp'] },
);
/** A valid pull answer whose timestamp is a number a naive reader chokes on (1e300, 2^53, -1, 0.5…). */
const hugeTimestamp = fc.tuple(validChanges, hostileNumber).map(([changes, timestamp]) => ({ ...changes, timestamp }));
const validUploaded = fc.record({ timestamp: seconds, update_urls: fc.array(fc.tuple(feedUrl, feedUrl), { maxLength: 2 }) }, { requiredKeys: ['timestamp'] });

/** A server time the engine can keep and format (the wire's seconds as ms). */
const usableSeconds = (s: number) => Number.isSafeInteger(s) && s >= 0 && !Number.isNaN(new Date(s * 1000).getTime());

function transport(answer: (req: { method: string; url: URL; body: unknown }, n: number) => FuzzAnswer): { t: Transport; http: Http; requests: { method: string; url: URL; body: unknown }[] } {
  const { http, requests } = fuzzHttp(answer, undefined, 'http://127.0.0.1:9');
  let kept: unknown = [];
  const t = createGpodderTransport({
    protocol: 'nextcloud',
    http,
    auth: () => ({ type: 'basic', username: 'alice', password: 'pw' }),
    account: 'alice',
    now: () => 0,
    device: 'fuzz',
    memo: { load: async () => kept, save: async (v) => void (kept = v) },
  });
  return { t, http, requests };
}

function sinkAt(cursor: number | undefined) {
  const applied: RemoteEntry[] = [];
  const cursors: (number | undefined)[] = [];
  const sink: PullSink = {
    cursor,
    empty: cursor === undefined,
    async apply(entries, complete) {
      applied.push(...entries);
      if (complete) cursors.push(complete.cursor);
      return true;
    },
    progress: () => undefined,
  };
  return { sink, applied, cursors };
}

/** Pull once; the error, if any, must be a SyncError. */
async function pull(t: Transport, sink: PullSink): Promise<void> {
  try {
    await t.pull(sink);
  } catch (error) {
    expect(isSyncError(error), `the pull threw ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`).toBe(true);
  }
}

const change = (feedUrl: string): StoredChange => ({ guid: feedUrl, kind: 'add', feedUrl, state: 'queued', version: 1, attempts: 0, notBefore: 0, createdAt: 0 });

describe('fuzz: gPodder wire validators take any JSON', () => {
  it('a pull answer: lists of strings and a usable timestamp (a Date holds it: issue 16 #10), or bad-response', () => {
    fc.assert(
      fc.property(fc.oneof(serverBody(validChanges), hostileValue), (body) => {
        const r = outcome(() => parseChanges(body));
        if (!r.ok) return;
        expect(usableSeconds(r.value.timestamp), `timestamp ${r.value.timestamp}`).toBe(true);
        for (const list of [r.value.add, r.value.remove]) expect(list.every((u) => typeof u === 'string')).toBe(true);
        for (const pair of r.value.update_urls) expect(pair.length === 2 && typeof pair[0] === 'string' && typeof pair[1] === 'string').toBe(true);
      }),
      FUZZ,
    );
  });

  it('an upload answer: a usable timestamp (issue 16 #10) and [old, new] pairs, or bad-response', () => {
    fc.assert(
      fc.property(fc.oneof(serverBody(validUploaded), hostileValue), (body) => {
        const r = outcome(() => parseUploaded(body));
        if (!r.ok) return;
        expect(usableSeconds(r.value.timestamp), `timestamp ${r.value.timestamp}`).toBe(true);
        for (const pair of r.value.update_urls) expect(pair.length === 2 && typeof pair[0] === 'string' && typeof pair[1] === 'string').toBe(true);
      }),
      FUZZ,
    );
  });

  it('valid answers round-trip', () => {
    fc.assert(
      fc.property(validChanges, validUploaded, (changes, uploaded) => {
        expect(parseChanges(changes)).toEqual({ update_urls: [], ...changes });
        expect(parseUploaded(uploaded)).toEqual({ update_urls: [], unreadable: [], ...uploaded });
      }),
      FUZZ,
    );
  });
});

describe('fuzz: gPodder transport over any answer', () => {
  it('a pull resolves or rejects with a SyncError, never a raw RangeError (issue 16 #10)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(serverBody(validChanges), hugeTimestamp), fc.option(seconds, { nil: undefined }), async (body, since) => {
        const { t } = transport(() => ({ status: 200, text: asText(body) }));
        const { sink, cursors } = sinkAt(since === undefined ? undefined : since * 1000);
        await pull(t, sink);
        for (const c of cursors) if (c !== undefined) expect(Number.isFinite(c) && !Number.isNaN(new Date(c).getTime()), `cursor ${c}`).toBe(true);
      }),
      FUZZ_IO,
    );
  });

  it('a pull stores only trimmed http(s) URLs, each row named by its own URL (issue 16 #11, #17)', async () => {
    await fc.assert(
      fc.asyncProperty(serverBody(validChanges), async (body) => {
        const { t } = transport(() => ({ status: 200, text: asText(body) }));
        const { sink, applied } = sinkAt(undefined);
        await pull(t, sink);
        const renamed = new Map<string, string>();
        for (const e of applied) {
          expect(isSafeFeedUrl(e.feedUrl), `feedUrl ${JSON.stringify(e.feedUrl)}`).toBe(true);
          if (e.newGuid !== undefined) renamed.set(e.guid, e.newGuid);
          // A gPodder row's guid is its feed URL: an entry lands on the row its feed URL names.
          expect(e.newGuid ?? e.guid, `entry ${JSON.stringify(e)}`).toBe(e.feedUrl);
        }
        for (const start of renamed.keys()) {
          const seen = new Set([start]);
          for (let at = renamed.get(start); at !== undefined; at = renamed.get(at)) {
            expect(seen.has(at), `update_urls loop through ${start}`).toBe(false);
            seen.add(at);
          }
        }
      }),
      FUZZ_IO,
    );
  });

  it('update_urls that loop (a→b, b→a, both added) never merge two subscriptions (issue 16 #17)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(feedUrl, { minLength: 2, maxLength: 2 }), seconds, async ([a, b], timestamp) => {
        const { t } = transport(() => ({ status: 200, text: asText({ add: [a, b], remove: [], timestamp, update_urls: [[a, b], [b, a]] }) }));
        const { sink, applied } = sinkAt(undefined);
        await pull(t, sink);
        for (const e of applied) expect(e.newGuid ?? e.guid, `entry ${JSON.stringify(e)}`).toBe(e.feedUrl);
      }),
      FUZZ_IO,
    );
  });

  it("a pull's cursor follows the server's clock back when it regressed (a reset server is pulled in full: issue 16 #10)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1000, max: 2_000_000_000 }), fc.integer({ min: 1, max: 999 }), async (before, back) => {
        const now = before - back;
        const { t, requests } = transport(() => ({ status: 200, text: asText({ add: [], remove: [], timestamp: now }) }));
        const { sink, cursors } = sinkAt(before * 1000);
        await pull(t, sink);
        for (const c of cursors) if (c !== undefined) expect(c, `cursor stayed at ${before} s after the server answered ${now} s`).toBeLessThanOrEqual(now * 1000);
        expect(requests.length).toBeLessThan(10);
      }),
      FUZZ_IO,
    );
  });

  it('an upload answer hands the store only trimmed http(s) URLs (issue 16 #11), and every outcome is typed', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(feedUrl, { minLength: 1, maxLength: 4 }),
        fc.constantFrom(200, 200, 201, 204, 400, 413, 500),
        fc.oneof(serverBody(validUploaded), fc.tuple(seconds, fc.nat(), fc.oneof(badFeedUrl, feedUrl)).map(([timestamp, i, to]) => ({ timestamp, rename: [i, to] as const }))),
        async (urls, status, made) => {
        // A rename of one of the URLs sent (`rename`: which one, to what), or any body.
        const rename = (made as { timestamp?: number; rename?: readonly [number, string] } | undefined)?.rename;
        const body = rename ? { timestamp: (made as { timestamp: number }).timestamp, update_urls: [[urls[rename[0] % urls.length]!, rename[1]]] } : made;
        const { t } = transport(() => ({ status, text: asText(body) }));
        const items: SendItem[] = urls.map((u) => ({ change: change(u), target: undefined }));
        const outcomes = await sendAll(t, items);
        expect(outcomes).toHaveLength(items.length);
        for (const o of outcomes) {
          expect(['added', 'error', 'deferred']).toContain(o.type);
          if (o.type === 'error') expect(isSyncError(o.error)).toBe(true);
          if (o.type === 'added') expect(isSafeFeedUrl(o.entry.feedUrl), `feedUrl ${JSON.stringify(o.entry.feedUrl)}`).toBe(true);
        }
      },
      ),
      FUZZ_IO,
    );
  });

  it('a 413 on an upload splits it: every change still goes (issue 16 #16)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(feedUrl, { minLength: 2, maxLength: 12 }), fc.integer({ min: 1, max: 6 }), async (urls, limit) => {
        const { t } = transport((req) => {
          const body = (req.body ?? {}) as { add?: string[]; remove?: string[] };
          const n = (body.add?.length ?? 0) + (body.remove?.length ?? 0);
          return n > limit ? { status: 413, text: asText({ code: 413, message: 'Payload Too Large' }) } : { status: 200, text: asText({ timestamp: 1_800_000_000, update_urls: [] }) };
        });
        const outcomes = await sendAll(t, urls.map((u) => ({ change: change(u), target: undefined })));
        for (const o of outcomes) expect(o.type, JSON.stringify(o)).toBe('added');
      }),
      FUZZ_IO,
    );
  });
});
