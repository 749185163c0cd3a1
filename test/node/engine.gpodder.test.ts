// The engine over gPodder v2 and the Nextcloud gPodder Sync paths, against the gPodder reference server in
// both its dialects (mygpo: per-device lists, exclusive since, URL rewriting; opodsync: one list, inclusive
// since, a whole request refused for one bad URL). A subscription's guid is its feed URL.
import { afterEach, describe, expect, it } from 'vitest';
import type { Protocol } from '../../src/types.ts';
import { startGpodderServer } from '../server/gpodder/server.ts';
import { wallTime } from '../server/listen.ts';
import type { GpodderDialect, GpodderServer } from '../server/gpodder/types.ts';
import { createSyncEngine, type SyncEngine } from '../../worker/index.ts';
import { settle, uniqueDb, until } from './helpers.ts';

const PASSWORD = 'alice-password';
const feed = (n: number | string) => `https://feeds.example/show-${n}.xml`;

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close().catch(() => undefined);
});

/** A server whose clock moves a second per reading: no two events share a second (the protocol's clock is in seconds). */
async function gpodder(dialect: GpodderDialect): Promise<GpodderServer> {
  let now = 1_700_000_000_000;
  const s = await startGpodderServer({ port: 0, dialect, time: { ...wallTime, now: () => (now += 1000) } });
  open.push(s);
  return s;
}

function engine(s: GpodderServer, protocol: Exclude<Protocol, 'opa'>, extra: { password?: string; dbName?: string; retryDelay?: number } = {}): SyncEngine {
  const e = createSyncEngine({
    protocol,
    baseUrl: s.url,
    auth: { type: 'basic', username: 'alice', password: extra.password ?? PASSWORD },
    device: 'web-player',
    dbName: extra.dbName ?? uniqueDb(`gpodder-${protocol}`),
    pullInterval: 0,
    pushDelay: 0,
    timeout: 2000,
    retry: extra.retryDelay === undefined ? { baseDelay: 10, maxDelay: 100 } : { baseDelay: extra.retryDelay, maxDelay: extra.retryDelay },
  });
  open.push(e);
  return e;
}

/** Subscribe `n` feeds on the whole account (under mygpo: every device it has, so register this one first). */
function seed(s: GpodderServer, n: number): string[] {
  if (s.dialect === 'mygpo') s.registerDevice('web-player');
  return s.seed(n);
}

const uploads = (s: GpodderServer) => s.log().filter((r) => r.method === 'POST' && /subscription/.test(r.path));
const account = (s: GpodderServer, protocol: Exclude<Protocol, 'opa'>) =>
  protocol === 'nextcloud' && s.dialect === 'mygpo' ? s.subscribed({ device: undefined }) : s.subscribed({ device: 'web-player' });

const cases: [GpodderDialect, Exclude<Protocol, 'opa'>][] = [
  ['mygpo', 'gpodder'],
  ['opodsync', 'gpodder'],
  ['opodsync', 'nextcloud'],
  ['mygpo', 'nextcloud'],
];

describe.each(cases)('gPodder engine (%s server, %s paths)', (dialect, protocol) => {
  it('first sync of an existing account: every URL, its URL as guid', async () => {
    const s = await gpodder(dialect);
    const urls = seed(s, 5);
    const e = engine(s, protocol);
    await e.sync();
    const subs = await e.subscriptions();
    expect(subs.map((x) => x.guid).sort()).toEqual([...urls].sort());
    for (const sub of subs) expect(sub).toMatchObject({ feedUrl: sub.guid, isSubscribed: true, pending: false });
    expect((await e.status()).cursor).toBeDefined();
  });

  it('addMany: 1,000 feeds added offline go up in one upload, their URLs as guids; a second call finds them there', async () => {
    const s = await gpodder(dialect);
    const e = engine(s, protocol);
    await e.sync();
    e.setOnline(false);
    const urls = Array.from({ length: 1000 }, (_, i) => feed(`bulk-${i}`));
    expect((await e.addMany(urls)).added).toEqual(urls);
    expect((await e.subscription(urls[0]!))?.guid).toBe(urls[0]);
    s.clearLog();
    e.setOnline(true);
    await settle(e, 30_000);
    expect(uploads(s)).toHaveLength(1);
    expect(account(s, protocol).sort()).toEqual([...urls].sort());
    expect(await e.addMany(urls.slice(0, 3))).toEqual({ added: [], alreadyThere: urls.slice(0, 3), skipped: [] });
  }, 60_000);

  it('offline changes replay in one upload (a second for changes queued behind an add), and another client\'s changes come down', async () => {
    const s = await gpodder(dialect);
    const [keep, drop] = seed(s, 2);
    const e = engine(s, protocol);
    await e.sync();
    e.setOnline(false);
    expect((await e.add(`  ${feed(1)} `)).guid).toBe(feed(1));
    await e.add(feed(2));
    await e.add(feed(3));
    await e.update(drop!, { isSubscribed: false });
    await e.update(feed(2), { isSubscribed: false });
    await e.update(feed(3), { isSubscribed: false });
    // Feed 3's unsubscribe, taken back before it went, folds away: nothing of it queued.
    await e.update(feed(3), { isSubscribed: true });
    const before = uploads(s).length;
    e.setOnline(true);
    await settle(e);
    // Order is kept per subscription: feed 2's unsubscribe goes after its add, in a second upload.
    expect(uploads(s).length - before).toBe(2);
    expect(new Set(account(s, protocol))).toEqual(new Set([keep, feed(1), feed(3)]));
    expect(await e.subscription(feed(2))).toMatchObject({ isSubscribed: false, pending: false });
    // Another client (the website: every list of the account) unsubscribes one and adds one.
    s.foreign.remove([feed(1)]);
    s.foreign.add([feed('other')]);
    await e.sync();
    expect(await e.subscription(feed(1))).toMatchObject({ isSubscribed: false, pending: false });
    expect(await e.subscription(feed('other'))).toMatchObject({ isSubscribed: true });
  });

  it('an add whose upload never arrived is uploaded again, and delivered', async () => {
    const s = await gpodder(dialect);
    seed(s, 1);
    const e = engine(s, protocol, { retryDelay: 60_000 });
    await e.sync();
    s.dropNext(1, { method: 'POST', path: /subscription/ });
    await e.add(feed('late'));
    await until(async () => (await e.pending())[0]?.attempts === 1);
    expect(account(s, protocol)).not.toContain(feed('late'));
    await settle(e);
    expect(account(s, protocol)).toContain(feed('late'));
    expect(await e.subscription(feed('late'))).toMatchObject({ isSubscribed: true, pending: false });
  });

  it('a feed URL change is a remove and an add in one upload; the old URL leads to the new entry', async () => {
    const s = await gpodder(dialect);
    const [old] = seed(s, 1);
    const e = engine(s, protocol);
    await e.sync();
    const before = uploads(s).length;
    const view = await e.update(old!, { feedUrl: feed('moved') });
    expect(view).toMatchObject({ guid: feed('moved'), feedUrl: feed('moved'), pending: true });
    await settle(e);
    expect(uploads(s).length - before).toBe(1);
    expect(account(s, protocol)).toEqual([feed('moved')]);
    expect(await e.subscription(old!)).toMatchObject({ guid: feed('moved'), feedUrl: feed('moved'), pending: false });
    expect((await e.subscriptions()).map((x) => x.guid)).toEqual([feed('moved')]);
  });

  it('what gPodder cannot express is refused at once and queues nothing', async () => {
    const s = await gpodder(dialect);
    const [url] = seed(s, 1);
    const e = engine(s, protocol);
    await e.sync();
    await expect(e.update(url!, { guid: 'my-own-guid' })).rejects.toMatchObject({ code: 'unsupported' });
    await expect(e.add(feed(9), { guid: 'my-own-guid' })).rejects.toMatchObject({ code: 'unsupported' });
    await expect(e.deletion(1)).rejects.toMatchObject({ code: 'unsupported' });
    await expect(e.add('ftp://feeds.example/x')).rejects.toMatchObject({ code: 'invalid' });
    expect(await e.pending()).toEqual([]);
  });

  it('remove() sends a remove', async () => {
    const s = await gpodder(dialect);
    const [url] = seed(s, 1);
    const e = engine(s, protocol);
    await e.sync();
    await e.remove(url!);
    await settle(e);
    expect(account(s, protocol)).toEqual([]);
  });

  it('wrong credentials pause the queue; setAuth resumes it', async () => {
    const s = await gpodder(dialect);
    const e = engine(s, protocol, { password: 'wrong' });
    await expect(e.sync()).rejects.toMatchObject({ code: 'unauthorized', status: 401 });
    expect((await e.status()).phase).toBe('auth-required');
    await expect(e.sync()).rejects.toMatchObject({ code: 'unauthorized', message: expect.stringContaining('call setAuth() with new ones') });
    await e.add(feed(3));
    await e.setAuth({ type: 'basic', username: 'alice', password: PASSWORD });
    await settle(e);
    expect(account(s, protocol)).toEqual([feed(3)]);
  });

  it('1,000 offline toggles of 100 feeds replay as a single upload', async () => {
    const s = await gpodder(dialect);
    const e = engine(s, protocol);
    for (let i = 0; i < 100; i++) await e.add(feed(i));
    await settle(e);
    e.setOnline(false);
    for (let round = 0; round < 10; round++) {
      for (let i = 0; i < 100; i++) await e.update(feed(i), { isSubscribed: round % 2 === 0 });
    }
    const before = uploads(s).length;
    e.setOnline(true);
    await settle(e);
    expect(uploads(s).length - before).toBe(1);
    // 1,000 toggles, the last one of each feed an unsubscribe: only that last word travels.
    expect(account(s, protocol)).toEqual([]);
    expect((await e.subscriptions({ subscribed: false })).length).toBe(100);
  }, 60_000);
});

describe('gPodder engine: what only one dialect does', () => {
  it('opodsync refuses a whole upload for one URL: the refused change is listed in failed(), the rest goes', async () => {
    const s = await gpodder('opodsync');
    const e = engine(s, 'gpodder');
    await e.sync();
    e.setOnline(false);
    await e.add(feed(1));
    // Valid to the client (a URL parser lower-cases the scheme), refused by opodsync's case-sensitive check.
    await e.add('HTTPS://feeds.example/LOUD.xml');
    await e.add(feed(2));
    e.setOnline(true);
    await settle(e);
    expect(new Set(s.subscribed())).toEqual(new Set([feed(1), feed(2)]));
    const failed = await e.failed();
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ kind: 'add', feedUrl: 'HTTPS://feeds.example/LOUD.xml', reason: { code: 'invalid', status: 400 } });
    expect(failed[0]!.reason.message).toMatch(/Invalid URL/);
  });

  it('mygpo rewrites a URL (update_urls): the local row and its queued changes move to the new URL', async () => {
    const s = await gpodder('mygpo');
    const e = engine(s, 'gpodder');
    await e.sync();
    const sent = 'HTTPS://Feeds.Example/Loud.xml?';
    await e.add(sent);
    await settle(e);
    const stored = s.subscribed({ device: 'web-player' });
    expect(stored).toHaveLength(1);
    expect(stored[0]).not.toBe(sent);
    expect(await e.subscription(stored[0]!)).toMatchObject({ guid: stored[0], feedUrl: stored[0], pending: false });
    expect(await e.subscription(sent)).toMatchObject({ guid: stored[0] });
    expect(await e.subscriptions()).toHaveLength(1);
  });

  it('binds the store to protocol and user: another user on the same database is refused', async () => {
    const s = await startGpodderServer({ port: 0, users: { alice: PASSWORD, bob: 'bob-password' } });
    open.push(s);
    const dbName = uniqueDb('gpodder-bound');
    const alice = engine(s, 'gpodder', { dbName });
    await alice.sync();
    await alice.close();
    const bob = createSyncEngine({ protocol: 'gpodder', baseUrl: s.url, auth: { type: 'basic', username: 'bob', password: 'bob-password' }, dbName, pullInterval: 0 });
    open.push(bob);
    await expect(bob.subscriptions()).rejects.toMatchObject({ code: 'account-mismatch' });
    const opa = createSyncEngine({ baseUrl: s.url, auth: { type: 'basic', username: 'alice', password: PASSWORD }, dbName, pullInterval: 0 });
    open.push(opa);
    await expect(opa.subscriptions()).rejects.toMatchObject({ code: 'account-mismatch' });
  });
});

// mygpo's own paths are left out: its pull nets a window's actions, so our upload and another client's undoing
// of it, both after our cursor, cancel out and no pull ever lists the feed (an answered upload leaves a mark to
// pull from; a lost answer leaves none). The other three list the feed's state, and the rule applies.
describe.each(cases.filter(([d, p]) => !(d === 'mygpo' && p === 'gpodder')))('a lost upload answer, then another client (issue 26; %s server, %s paths)', (dialect, protocol) => {
  it("an add whose upload's answer was lost is not uploaded again over another client's unsubscribe", async () => {
    const s = await gpodder(dialect);
    seed(s, 1);
    // No retry of its own between the steps: the next attempt is the test's sync(), which pulls first.
    const e = engine(s, protocol, { retryDelay: 60_000 });
    await e.sync();
    s.dropNext(1, { method: 'POST', path: /subscription/ }, { afterHandling: true });
    await e.add(feed('lost'));
    await until(async () => (await e.pending())[0]?.attempts === 1);
    expect(account(s, protocol)).toContain(feed('lost'));
    s.foreign.remove([feed('lost')]);
    await settle(e);
    expect(account(s, protocol)).not.toContain(feed('lost'));
    expect(await e.subscription(feed('lost'))).toMatchObject({ isSubscribed: false, pending: false });
  });
});
