// Property tests of the Open Podcast API transport over the real HTTP layer (worker/http.ts) and a fetch that
// answers whatever the property makes up: every status, empty bodies, HTML, near-valid JSON. Whatever comes
// back, a send ends in a typed outcome (never a throw), acknowledges only what the server did apply, and hands
// the store only what it may keep; a pull resolves or rejects with a SyncError, and never asks forever.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSyncError } from '../../src/errors.ts';
import type { StoredChange } from '../../src/schema.ts';
import { createOpaTransport } from '../../worker/opa/transport.ts';
import type { PullSink, RemoteEntry, SendItem } from '../../worker/transport.ts';
import { sendAll } from './send-all.ts';
import { asText, feedUrl, FUZZ_IO, fuzzHttp, guid, isoTimestamp, isSafeFeedUrl, oneItemWrong, serverBody, stillClock, type FuzzAnswer } from './fuzz.arbitraries.ts';

const HTML = '<!doctype html><html><body>Sign in</body></html>';

const change = (kind: StoredChange['kind'], target: string, extra: Partial<StoredChange> = {}): StoredChange => ({
  guid: target,
  kind,
  state: 'queued',
  version: 1,
  attempts: 0,
  notBefore: 0,
  createdAt: 0,
  ...extra,
});

const statuses = fc.oneof(fc.constantFrom(200, 201, 202, 204, 205, 206, 301, 302, 400, 404, 409, 410, 413, 422, 429, 500, 503), fc.integer({ min: 200, max: 599 }));

/** Any answer text: near-valid JSON of `valid`, an empty or blank body, HTML. */
function answerText<T extends object>(valid: fc.Arbitrary<T>): fc.Arbitrary<string> {
  return fc.oneof({ arbitrary: serverBody(valid).map(asText), weight: 5 }, fc.constantFrom('', ' ', '\n', HTML, '{', 'null', '[]', '""'));
}

const validUpdate = fc.record({ new_feed_url: feedUrl, is_subscribed: fc.boolean(), subscription_changed: isoTimestamp, new_guid: fc.uuid(), guid_changed: isoTimestamp }, { requiredKeys: [] });
const validAdded = fc.record({ feed_url: feedUrl, guid: fc.uuid(), is_subscribed: fc.boolean(), subscription_changed: isoTimestamp }, { requiredKeys: ['feed_url', 'guid', 'is_subscribed'] });
const validAdd = fc.record({ success: fc.array(validAdded, { maxLength: 2 }), failure: fc.constant([]) });
const validAddSpoiled = oneItemWrong(fc.array(validAdded, { maxLength: 1 }), validAdded).map((success) => ({ success, failure: [] }));
const validAccepted = fc.record({ deletion_id: fc.nat(), message: fc.string() });

/** A send of one change against one made-up answer. */
async function sendOnce(item: SendItem, answer: FuzzAnswer) {
  const { http, requests } = fuzzHttp(() => answer);
  const outcomes = await sendAll(createOpaTransport(http, stillClock, 5), [item]);
  expect(outcomes).toHaveLength(1);
  const outcome = outcomes[0]!;
  if (outcome.type === 'error') expect(isSyncError(outcome.error), `not a SyncError: ${String(outcome.error)}`).toBe(true);
  return { outcome, requests };
}

/** What a proxy that never forwarded the request answers: a 2xx with nothing (or white space) in it. */
const emptyAnswer: fc.Arbitrary<FuzzAnswer> = fc.record({ status: fc.oneof(fc.constantFrom(200, 201, 202), fc.integer({ min: 200, max: 299 }).filter((s) => s !== 204)), text: fc.constantFrom('', ' ', '\n', '\r\n') });


describe('fuzz: OPA transport over any answer', () => {
  it('PATCH, DELETE and POST end in a typed outcome of their kind whatever the answer', async () => {
    await fc.assert(
      fc.asyncProperty(statuses, answerText(validUpdate), answerText(validAccepted), fc.oneof(answerText(validAdd), validAddSpoiled.map(asText)), async (status, patchText, deleteText, postText) => {
        const patch = await sendOnce({ change: change('update', 'g1', { change: { isSubscribed: false } }), target: 'g1' }, { status, text: patchText });
        expect(['updated', 'error']).toContain(patch.outcome.type);
        if (status === 204) expect(patch.outcome.type).toBe('updated');
        const del = await sendOnce({ change: change('remove', 'g1'), target: 'g1' }, { status, text: deleteText });
        expect(['deleted', 'deletion-started', 'error']).toContain(del.outcome.type);
        if (del.outcome.type === 'deletion-started') expect(Number.isSafeInteger(del.outcome.deletionId)).toBe(true);
        const post = await sendOnce({ change: change('add', 'local-1', { feedUrl: 'https://feeds.example/a.xml' }), target: undefined }, { status, text: postText });
        expect(['added', 'error']).toContain(post.outcome.type);
      }),
      FUZZ_IO,
    );
  });

  it('an empty 2xx other than 204 acknowledges no PATCH, DELETE or POST (issue 16 #1)', async () => {
    await fc.assert(
      fc.asyncProperty(emptyAnswer, async (answer) => {
        const patch = await sendOnce({ change: change('update', 'g1', { change: { isSubscribed: false } }), target: 'g1' }, answer);
        expect(patch.outcome.type, `an empty ${answer.status} acknowledged the PATCH`).toBe('error');
        const del = await sendOnce({ change: change('remove', 'g1'), target: 'g1' }, answer);
        expect(del.outcome.type, `an empty ${answer.status} acknowledged the DELETE`).toBe('error');
        const post = await sendOnce({ change: change('add', 'local-1', { feedUrl: 'https://feeds.example/a.xml' }), target: undefined }, answer);
        expect(post.outcome.type, `an empty ${answer.status} acknowledged the POST`).toBe('error');
      }),
      FUZZ_IO,
    );
  });

  it('a PATCH or POST answer hands the store only trimmed http(s) feed URLs (issue 16 #11)', async () => {
    await fc.assert(
      fc.asyncProperty(answerText(validUpdate), fc.oneof(answerText(validAdd), validAddSpoiled.map(asText)), async (patchText, postText) => {
        const patch = await sendOnce({ change: change('update', 'g1', { change: { isSubscribed: false } }), target: 'g1' }, { status: 200, text: patchText });
        if (patch.outcome.type === 'updated' && patch.outcome.result.feedUrl !== undefined) {
          expect(isSafeFeedUrl(patch.outcome.result.feedUrl), `PATCH answer's feedUrl ${JSON.stringify(patch.outcome.result.feedUrl)}`).toBe(true);
        }
        const post = await sendOnce({ change: change('add', 'local-1', { feedUrl: 'https://feeds.example/a.xml' }), target: undefined }, { status: 200, text: postText });
        if (post.outcome.type === 'added') expect(isSafeFeedUrl(post.outcome.entry.feedUrl), `POST answer's feedUrl ${JSON.stringify(post.outcome.entry.feedUrl)}`).toBe(true);
      }),
      FUZZ_IO,
    );
  });

  it('any guid addresses exactly its own subscription: one path segment that decodes to it, or no request (issue 16 #12)', async () => {
    await fc.assert(
      fc.asyncProperty(guid, fc.constantFrom('update', 'remove') as fc.Arbitrary<'update' | 'remove'>, async (target, kind) => {
        const item: SendItem = { change: change(kind, target, kind === 'update' ? { change: { isSubscribed: true } } : {}), target };
        const { outcome, requests } = await sendOnce(item, { status: 204, text: '' });
        if (!requests.length) {
          expect(outcome.type).toBe('error');
          return;
        }
        for (const r of requests) {
          const prefix = '/v1/subscriptions/';
          expect(r.url.pathname.startsWith(prefix), `${kind} of guid ${JSON.stringify(target)} went to ${r.url.pathname}`).toBe(true);
          const segment = r.url.pathname.slice(prefix.length);
          expect(segment.includes('/'), `${kind} of guid ${JSON.stringify(target)} went to ${r.url.pathname}`).toBe(false);
          expect(decodeURIComponent(segment), `${kind} of guid ${JSON.stringify(target)} went to ${r.url.pathname}`).toBe(target);
          expect(r.url.search + r.url.hash).toBe('');
        }
      }),
      FUZZ_IO,
    );
  });

  it('a pull over any first page: resolves or rejects with a SyncError, stores only trimmed http(s) feed URLs (issue 16 #11) and usable times, asks a bounded number of times', async () => {
    const validEntry = fc.record(
      { feed_url: feedUrl, guid: fc.uuid(), is_subscribed: fc.boolean(), subscription_changed: isoTimestamp, deleted: isoTimestamp },
      { requiredKeys: ['feed_url', 'guid', 'is_subscribed'] },
    );
    const validPage = fc.record({ total: fc.nat(6), page: fc.constant(1), per_page: fc.constant(5), subscriptions: fc.array(validEntry, { maxLength: 5 }) });
    const spoiledPage = fc.tuple(validPage, oneItemWrong(fc.array(validEntry, { maxLength: 3 }), validEntry)).map(([p, subscriptions]) => ({ ...p, subscriptions }));
    const last = asText({ total: 0, page: 2, per_page: 5, subscriptions: [] });
    await fc.assert(
      fc.asyncProperty(fc.oneof(answerText(validPage), spoiledPage.map(asText)), statuses, fc.option(fc.nat(2_000_000_000_000), { nil: undefined }), async (text, status, cursor) => {
        const { http, requests } = fuzzHttp((_req, n) => (n === 1 ? { status, text } : n < 100 ? { status: 200, text: last } : { status: 599, text: '' }));
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
        try {
          await createOpaTransport(http, stillClock, 5).pull(sink);
        } catch (error) {
          expect(isSyncError(error), `the pull threw ${String(error)}`).toBe(true);
        }
        expect(requests.length).toBeLessThan(100);
        for (const e of applied) {
          expect(isSafeFeedUrl(e.feedUrl), `feedUrl ${JSON.stringify(e.feedUrl)}`).toBe(true);
          expect(Number.isFinite(e.at) && Number.isFinite(e.dataAt)).toBe(true);
        }
        for (const c of cursors) if (c !== undefined) expect(Number.isFinite(c) && !Number.isNaN(new Date(c).getTime())).toBe(true);
      }),
      FUZZ_IO,
    );
  });
});
