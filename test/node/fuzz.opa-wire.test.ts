// Property tests of the Open Podcast API's wire validators (worker/opa/wire.ts) and the step that turns their
// output into the engine's terms (worker/opa/entries.ts): whatever JSON a server sends, a validator returns a
// clean typed value or throws SyncError('bad-response'), never another error; a clean value holds only what
// the engine may store (trimmed http(s) feed URLs, timestamps a Date can hold); valid answers round-trip.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toRemoteEntry, toUpdateResult } from '../../worker/opa/entries.ts';
import {
  parseAddResult,
  parseDeletion,
  parseDeletionAccepted,
  parsePage,
  parseSubscription,
  parseUpdateResult,
  type WireSubscription,
} from '../../worker/opa/wire.ts';
import { formatTimestamp, parseTimestamp } from '../../worker/time.ts';
import { feedUrl, FUZZ, hostileValue, isoTimestamp, isSafeFeedUrl, oneItemWrong, outcome, serverBody } from './fuzz.arbitraries.ts';

/** A guid a server may legitimately give: not blank (refused from the app and servers alike), not a dot segment (path trouble, see fuzz.opa-transport). */
const serverGuid = fc.string({ minLength: 1 }).filter((g) => g.trim() !== '' && g !== '.' && g !== '..');

const validSubscription: fc.Arbitrary<WireSubscription> = fc.record(
  {
    feed_url: feedUrl,
    guid: serverGuid,
    is_subscribed: fc.boolean(),
    subscription_changed: isoTimestamp,
    new_guid: serverGuid,
    guid_changed: isoTimestamp,
    deleted: isoTimestamp,
  },
  { requiredKeys: ['feed_url', 'guid', 'is_subscribed'] },
);

const validPage = fc.record(
  {
    total: fc.nat(1000),
    page: fc.integer({ min: 1, max: 100 }),
    per_page: fc.integer({ min: 1, max: 50 }),
    next: fc.webUrl(),
    previous: fc.webUrl(),
    subscriptions: fc.array(validSubscription, { maxLength: 5 }),
  },
  { requiredKeys: ['total', 'page', 'per_page', 'subscriptions'] },
);

/** A page whose entries include one with a field spoiled. */
const pageWithOneBadEntry = fc.tuple(validPage, oneItemWrong(fc.array(validSubscription, { maxLength: 4 }), validSubscription)).map(([page, subscriptions]) => ({ ...page, subscriptions }));

const validUpdateResult = fc.record(
  { new_feed_url: feedUrl, is_subscribed: fc.boolean(), subscription_changed: isoTimestamp, new_guid: serverGuid, guid_changed: isoTimestamp },
  { requiredKeys: [] },
);

const validAdded = fc.record({ feed_url: feedUrl, guid: serverGuid, is_subscribed: fc.boolean(), subscription_changed: isoTimestamp }, { requiredKeys: ['feed_url', 'guid', 'is_subscribed'] });
const validAddResult = fc.record({
  success: fc.array(validAdded, { maxLength: 3 }),
  failure: fc.array(fc.record({ feed_url: fc.string({ minLength: 1 }), message: fc.string({ minLength: 1 }) }), { maxLength: 3 }),
});
/** A POST answer whose added entries include one with a field spoiled. */
const addResultWithOneBadEntry = fc.tuple(validAddResult, oneItemWrong(fc.array(validAdded, { maxLength: 2 }), validAdded)).map(([r, success]) => ({ ...r, success }));

const validDeletion = fc.record({ deletion_id: fc.nat(), status: fc.constantFrom('PENDING', 'SUCCESS', 'FAILURE'), message: fc.string({ minLength: 1 }) }, { requiredKeys: ['deletion_id', 'status'] });
const validDeletionAccepted = fc.record({ deletion_id: fc.nat(), message: fc.string({ minLength: 1 }) }, { requiredKeys: ['deletion_id'] });

/** A server timestamp the engine keeps: it parses to a time a Date can hold. */
function usableTime(value: string | undefined): boolean {
  if (value === undefined) return true;
  const ms = parseTimestamp(value);
  return ms !== undefined && Number.isFinite(ms) && !Number.isNaN(new Date(ms).getTime());
}

/** The contract of a clean listed entry: what the engine may store as it is. */
function entryViolations(e: WireSubscription): string[] {
  const out: string[] = [];
  if (!isSafeFeedUrl(e.feed_url)) out.push(`feed_url ${JSON.stringify(e.feed_url)} is not a trimmed http(s) URL`);
  if (typeof e.guid !== 'string' || e.guid === '') out.push('guid is not a non-empty string');
  if (typeof e.is_subscribed !== 'boolean') out.push('is_subscribed is not a boolean');
  if (e.new_guid !== undefined && (typeof e.new_guid !== 'string' || e.new_guid === '')) out.push('new_guid is not a non-empty string');
  for (const key of ['subscription_changed', 'guid_changed', 'deleted'] as const) if (!usableTime(e[key])) out.push(`${key} ${e[key]} is not a usable time`);
  const remote = toRemoteEntry(e);
  if (!Number.isFinite(remote.at) || remote.at < 0 || !Number.isFinite(remote.dataAt)) out.push(`at ${remote.at} / dataAt ${remote.dataAt} are not times`);
  else formatTimestamp(remote.at);
  return out;
}

describe('fuzz: OPA wire validators take any JSON', () => {
  it('a listed entry: a clean entry the engine may store (a trimmed http(s) feed URL: issue 16 #11), or bad-response', () => {
    fc.assert(
      fc.property(serverBody(validSubscription), (body) => {
        // parseSubscription checks a shape; the rules (feed URL, guid) apply where entries are taken: a page.
        const r = outcome(() => parsePage({ total: 1, page: 1, per_page: 1, subscriptions: [body] }, 1));
        if (r.ok) for (const e of r.value.subscriptions) expect(entryViolations(e)).toEqual([]);
      }),
      FUZZ,
    );
  });

  it('a page: clean entries (issue 16 #11) within the size asked for, or bad-response', () => {
    fc.assert(
      fc.property(fc.oneof(serverBody(validPage), pageWithOneBadEntry), fc.integer({ min: 1, max: 6 }), (body, max) => {
        const r = outcome(() => parsePage(body, max));
        if (!r.ok) return;
        expect(r.value.subscriptions.length).toBeLessThanOrEqual(max);
        for (const n of [r.value.total, r.value.page, r.value.per_page]) expect(Number.isSafeInteger(n) && n >= 0).toBe(true);
        for (const e of r.value.subscriptions) expect(entryViolations(e)).toEqual([]);
      }),
      FUZZ,
    );
  });

  it('a PATCH answer: only usable fields (a feed URL the app could have written: issue 16 #11), or bad-response', () => {
    fc.assert(
      fc.property(fc.oneof(serverBody(validUpdateResult), fc.constant(undefined)), (body) => {
        const r = outcome(() => parseUpdateResult(body));
        if (!r.ok) return;
        const v = r.value;
        if (v.new_feed_url !== undefined) expect(isSafeFeedUrl(v.new_feed_url), `new_feed_url ${JSON.stringify(v.new_feed_url)}`).toBe(true);
        if (v.is_subscribed !== undefined) expect(typeof v.is_subscribed).toBe('boolean');
        if (v.new_guid !== undefined) expect(v.new_guid).not.toBe('');
        expect(usableTime(v.subscription_changed) && usableTime(v.guid_changed)).toBe(true);
        toUpdateResult(v);
      }),
      FUZZ,
    );
  });

  it('a POST answer: added entries with trimmed http(s) feed URLs (issue 16 #11), or bad-response', () => {
    fc.assert(
      fc.property(fc.oneof(serverBody(validAddResult), addResultWithOneBadEntry), (body) => {
        const r = outcome(() => parseAddResult(body));
        if (!r.ok) return;
        for (const s of r.value.success) {
          expect(isSafeFeedUrl(s.feed_url), `feed_url ${JSON.stringify(s.feed_url)}`).toBe(true);
          expect(typeof s.guid === 'string' && s.guid !== '').toBe(true);
          expect(typeof s.is_subscribed).toBe('boolean');
          expect(usableTime(s.subscription_changed)).toBe(true);
        }
        for (const f of r.value.failure) expect(typeof f.feed_url === 'string' && typeof f.message === 'string').toBe(true);
      }),
      FUZZ,
    );
  });

  it('a DELETE answer and a deletion status: a deletion id the engine can ask about again (a safe integer; not an issue-16 item), or bad-response', () => {
    fc.assert(
      fc.property(serverBody(validDeletionAccepted), serverBody(validDeletion), (accepted, status) => {
        const a = outcome(() => parseDeletionAccepted(accepted));
        // The id goes back into a path (`deletions/{id}`): 1e300 is an integer, but not one a path or a store keeps exactly.
        if (a.ok) expect(Number.isSafeInteger(a.value.deletion_id) && a.value.deletion_id >= 0, `deletion_id ${a.value.deletion_id}`).toBe(true);
        const d = outcome(() => parseDeletion(status));
        if (d.ok) {
          expect(['PENDING', 'SUCCESS', 'FAILURE']).toContain(d.value.status);
          expect(Number.isSafeInteger(d.value.deletion_id) && d.value.deletion_id >= 0, `deletion_id ${d.value.deletion_id}`).toBe(true);
        }
      }),
      FUZZ,
    );
  });

  it('valid answers round-trip unchanged', () => {
    fc.assert(
      fc.property(validSubscription, validUpdateResult, validDeletion, validDeletionAccepted, (sub, update, deletion, accepted) => {
        expect(parseSubscription(sub)).toEqual(sub);
        expect(parseUpdateResult(update)).toEqual(update);
        expect(parseDeletion(deletion)).toEqual(deletion);
        expect(parseDeletionAccepted(accepted)).toEqual(accepted);
      }),
      FUZZ,
    );
    fc.assert(
      fc.property(validPage, validAddResult, (page, added) => {
        expect(parsePage(page, 5)).toEqual({ ...page, skipped: [] });
        const parsed = parseAddResult(added);
        expect(parsed.success).toEqual(added.success);
      }),
      FUZZ,
    );
  });

  it('a null optional field is absent, a null required one is refused', () => {
    fc.assert(
      fc.property(validSubscription, fc.constantFrom('subscription_changed', 'new_guid', 'guid_changed', 'deleted'), fc.constantFrom('feed_url', 'guid', 'is_subscribed'), (sub, optional, required) => {
        const parsed = parseSubscription({ ...sub, [optional]: null });
        expect(optional in parsed).toBe(false);
        expect(outcome(() => parseSubscription({ ...sub, [required]: null })).ok).toBe(false);
      }),
      FUZZ,
    );
  });

  it('hostile values anywhere never throw anything but bad-response', () => {
    const all = [parseSubscription, (v: unknown) => parsePage(v, 5), parseUpdateResult, parseAddResult, parseDeletion, parseDeletionAccepted];
    fc.assert(
      fc.property(hostileValue, (value) => {
        for (const parse of all) outcome(() => parse(value));
      }),
      FUZZ,
    );
  });
});
