// The gPodder transport against a hostile world (issue 16): a dead server coming back, timestamps that go
// backwards or out of range, huge answers, 413s, looping update_urls.
import { afterEach, describe, expect, it } from 'vitest';
import { startGpodderServer } from '../server/gpodder/server.ts';
import { wallTime } from '../server/listen.ts';
import type { GpodderDialect, GpodderServer } from '../server/gpodder/types.ts';
import { createSyncEngine, type SyncEngine } from '../../worker/index.ts';
import type { SyncOptions } from '../../src/types.ts';
import type { StoredChange } from '../../src/schema.ts';
import { systemClock } from '../../worker/clock.ts';
import { PULL_BATCH, pullGpodder } from '../../worker/gpodder/pull.ts';
import { MAX_UPLOAD_URLS, planGpodder, sendGpodder } from '../../worker/gpodder/send.ts';
import { sendAll } from './send-all.ts';
import { MAX_ANSWER_URLS } from '../../worker/gpodder/wire.ts';
import type { PullSink, RemoteEntry } from '../../worker/transport.ts';
import { createHttp } from '../../worker/http.ts';
import { createStore } from '../../worker/store/store.ts';
import { openSyncDatabase } from '../../src/schema.ts';
import { settle, uniqueDb, until } from './helpers.ts';

const PASSWORD = 'alice-password';
const feed = (n: number | string) => `https://feeds.example/show-${n}.xml`;

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close().catch(() => undefined);
});

/** A server whose clock moves a second per reading (the protocol's clock is in seconds); `clock.now` can be set. */
async function gpodder(dialect: GpodderDialect = 'mygpo', clock = { now: 1_700_000_000_000 }): Promise<GpodderServer> {
  const s = await startGpodderServer({ port: 0, dialect, time: { ...wallTime, now: () => (clock.now += 1000) } });
  open.push(s);
  if (dialect === 'mygpo') s.registerDevice('web-player');
  return s;
}

/** A fetch whose subscription pulls get `answer(url)` instead of the server's (undefined: the server's). */
function answering(answer: (url: URL) => unknown): typeof fetch {
  return (input, init) => {
    const url = new URL(String(input));
    const body = (init?.method ?? 'GET') === 'GET' && /subscriptions/.test(url.pathname) ? answer(url) : undefined;
    return body === undefined ? fetch(input, init) : Promise.resolve(Response.json(body));
  };
}

/** A sink that records what a transport writes. */
function recordingSink(): PullSink & { batches: { entries: readonly RemoteEntry[]; cursor?: number }[] } {
  const batches: { entries: readonly RemoteEntry[]; cursor?: number }[] = [];
  return {
    cursor: undefined,
    empty: true,
    batches,
    apply(entries, complete) {
      batches.push({ entries, ...(complete ? { cursor: complete.cursor } : {}) });
      return Promise.resolve(complete !== undefined);
    },
    progress: () => undefined,
  };
}

function directHttp(s: GpodderServer, fetchImpl: typeof fetch = fetch) {
  return createHttp({
    baseUrl: s.url,
    fetch: fetchImpl,
    clock: systemClock,
    timeout: 10_000,
    auth: () => ({ type: 'basic', username: 'alice', password: PASSWORD }),
    signal: new AbortController().signal,
  });
}

function engine(s: GpodderServer, extra: Partial<SyncOptions> = {}): SyncEngine {
  const e = createSyncEngine({
    protocol: 'gpodder',
    baseUrl: s.url,
    auth: { type: 'basic', username: 'alice', password: PASSWORD },
    device: 'web-player',
    dbName: uniqueDb('gpodder-hostile'),
    pullInterval: 0,
    pushDelay: 0,
    timeout: 2000,
    retry: { baseDelay: 10, maxDelay: 100 },
    ...extra,
  });
  open.push(e);
  return e;
}

const uploads = (s: GpodderServer) => s.log().filter((r) => r.method === 'POST' && /subscriptions\//.test(r.path));

/**
 * A fetch that can play a dead server (the request goes to a port nobody listens on: connection refused) and
 * counts every URL found in two uploads under way at once (the same change in two requests).
 */
function deadOrAlive(s: GpodderServer) {
  const flying = new Map<string, number>();
  const control = { dead: false, overlaps: 0 };
  const fetchImpl: typeof fetch = async (input, init) => {
    if (control.dead) return fetch(String(input).replace(new URL(s.url).origin, 'http://127.0.0.1:9'), init);
    const body = init?.method === 'POST' && typeof init.body === 'string' ? (JSON.parse(init.body) as { add?: unknown; remove?: unknown }) : {};
    const urls = [body.add, body.remove].flatMap((list) => (Array.isArray(list) ? (list as string[]) : []));
    for (const u of urls) {
      if (flying.has(u)) control.overlaps++;
      flying.set(u, (flying.get(u) ?? 0) + 1);
    }
    try {
      return await fetch(input, init);
    } finally {
      for (const u of urls) if (flying.get(u) === 1) flying.delete(u);
      else flying.set(u, flying.get(u)! - 1);
    }
  };
  return Object.assign(control, { fetch: fetchImpl });
}

/** 100 feeds subscribed, then 1,000 toggles of them made while the server is dead. */
async function togglesWhileDead(options: Partial<SyncOptions> = {}): Promise<{ s: GpodderServer; e: SyncEngine; net: ReturnType<typeof deadOrAlive> }> {
  const s = await gpodder();
  const net = deadOrAlive(s);
  const e = engine(s, { fetch: net.fetch, ...options });
  for (let i = 0; i < 100; i++) await e.add(feed(i));
  await settle(e);
  net.dead = true;
  // Each edit starts a push that fails against the dead server: changes get backoffs of their own, and
  // edits made while one was in flight queue behind it.
  for (let round = 0; round < 10; round++) {
    for (let i = 0; i < 100; i++) await e.update(feed(i), { isSubscribed: round % 2 === 0 });
  }
  await until(async () => !['pushing', 'pulling'].includes((await e.status()).phase), 5000, 'the pushes to end');
  return { s, e, net };
}

describe('gPodder: a dead server coming back (item 6)', () => {
  it('1,000 toggles of 100 feeds while the server is down: one upload once it is back, no change in two requests at once', async () => {
    // Retries far apart: the upload after the server is back is sync()'s, not a retry timer's that fired first
    // with the changes due by then (that case is the next test's).
    const { s, e, net } = await togglesWhileDead({ retry: { baseDelay: 60_000, maxDelay: 60_000 } });
    const before = uploads(s).length;
    net.dead = false;
    await settle(e);
    expect(net.overlaps).toBe(0);
    expect(uploads(s).length - before).toBe(1);
    // 1,000 toggles, the last one of each feed an unsubscribe: only that last word counts.
    expect(s.subscribed({ device: 'web-player' })).toEqual([]);
    expect((await e.subscriptions({ subscribed: false })).length).toBe(100);
    expect(await e.failed()).toEqual([]);
  }, 60_000);

  it('found back by a retry timer: the first upload carries everything queued, whatever retry time each change had', async () => {
    const { s, e, net } = await togglesWhileDead();
    const before = uploads(s).length;
    net.dead = false;
    // No sync(): the engine's own timers (each change's retry, the pull retry) find the server back, and the
    // queue is not split by each change's own retry time.
    await until(async () => (await e.pending()).length === 0, 10_000, 'the queue to drain');
    expect(net.overlaps).toBe(0);
    expect(uploads(s).length - before).toBe(1);
    expect(s.subscribed({ device: 'web-player' })).toEqual([]);
    // A hang guard, not a figure: each of the 1,000 edits' pushes against the dead server now carries the whole
    // queue (~38 s alone on a 2-core machine; the next session makes the backoff hold the request instead).
  }, 180_000);

  it('five adds made while the server is down go in one upload once a retry timer finds it back', async () => {
    const s = await gpodder();
    const net = deadOrAlive(s);
    // Retries spread out (each add's own backoff, from 0.25 s to 1 s): the timer that fires first finds the others
    // not due yet.
    const e = engine(s, { fetch: net.fetch, retry: { baseDelay: 500, maxDelay: 1000 } });
    await e.sync();
    net.dead = true;
    for (let i = 0; i < 5; i++) {
      await e.add(feed(i));
      await until(async () => (await e.pending()).every((c) => c.attempts > 0), 5000, 'the add to fail once');
    }
    const before = uploads(s).length;
    net.dead = false;
    await until(async () => (await e.pending()).length === 0, 10_000, 'the queue to drain');
    expect(uploads(s).length - before).toBe(1);
    expect(s.subscribed({ device: 'web-player' }).sort()).toEqual([0, 1, 2, 3, 4].map(feed).sort());
  }, 60_000);
});

describe('gPodder: an upload too large for the server or a proxy (item 16)', () => {
  it('a 413 splits the upload as a 400 does: every change arrives, none is listed in failed()', async () => {
    const s = await gpodder();
    // A proxy in front of the server with a small body limit.
    const limited: typeof fetch = (input, init) =>
      typeof init?.body === 'string' && init.method === 'POST' && init.body.length > 500
        ? Promise.resolve(new Response('Request Entity Too Large', { status: 413 }))
        : fetch(input, init);
    const e = engine(s, { fetch: limited });
    await e.sync();
    e.setOnline(false);
    for (let i = 0; i < 40; i++) await e.add(feed(i));
    e.setOnline(true);
    await settle(e);
    expect(await e.failed()).toEqual([]);
    expect(s.subscribed({ device: 'web-player' }).length).toBe(40);
    expect(uploads(s).length).toBeGreaterThan(1);
  });

  it(`an upload carries at most ${MAX_UPLOAD_URLS} URLs`, async () => {
    const s = await gpodder();
    const http = directHttp(s);
    const n = MAX_UPLOAD_URLS * 2 + 500;
    const items = Array.from({ length: n }, (_, i) => {
      const change: StoredChange = { id: i + 1, guid: feed(i), kind: 'add', feedUrl: feed(i), state: 'queued', version: 1, attempts: 0, notBefore: 0, createdAt: 0 };
      return { change, target: undefined };
    });
    const path = 'api/2/subscriptions/alice/web-player.json';
    const outcomes = await sendAll({ plan: (i) => planGpodder(path, i), send: (r) => sendGpodder(http, r, () => undefined, 0) }, items);
    expect(outcomes.every((o) => o.type === 'added')).toBe(true);
    const sizes = uploads(s).map((r) => (r.body as { add: string[] }).add.length);
    expect(sizes).toEqual([MAX_UPLOAD_URLS, MAX_UPLOAD_URLS, 500]);
    expect(s.subscribed({ device: 'web-player' }).length).toBe(n);
  });
});

describe('gPodder: a server clock going backwards, or out of range (item 10)', () => {
  it('an answer older than the cursor means the server was reset or restored: everything is pulled again, and its word wins', async () => {
    const clock = { now: 1_700_000_000_000 };
    const s = await gpodder('opodsync', clock);
    const e = engine(s);
    s.foreign.add([feed(1), feed(2), feed(3)]);
    await e.sync();
    expect((await e.subscriptions()).map((x) => x.guid).sort()).toEqual([feed(1), feed(2), feed(3)]);
    // Restored from a day-old backup on a host whose clock is a day behind: feed 2 is gone, feed 3 was removed
    // back then, feed 9 is new. Every change is older than the engine's cursor.
    s.reset();
    clock.now -= 86_400_000;
    s.foreign.add([feed(1), feed(3), feed(9)]);
    s.foreign.remove([feed(3)]);
    await e.sync();
    expect((await e.subscription(feed(3)))?.isSubscribed).toBe(false);
    // Feed 2 has no record on the restored server. A server whose clock went back may only hide it (mygpo lists
    // nothing stamped after its "now"), or have lost it: either way this device says it again, never drops it.
    expect((await e.subscriptions({ subscribed: true })).map((x) => x.guid).sort()).toEqual([feed(1), feed(2), feed(9)]);
    expect(s.subscribed().sort()).toEqual([feed(1), feed(2), feed(9)]);
    // The next pull asks from the new answer's clock, not the old cursor.
    const pulls = () => s.log().filter((r) => r.method === 'GET' && r.path.includes('/subscriptions/'));
    const sinces = pulls().map((r) => Number(r.query.since));
    await e.sync();
    const last = pulls().map((r) => Number(r.query.since)).slice(sinces.length);
    // (With a second window since this device's upload of feed 2: see `pullGpodder`.)
    expect(last.length).toBeGreaterThan(0);
    for (const since of last) expect(since).toBeLessThan(1_700_000_000);
    // Later changes on the restored server's clock (still a day behind every stamp it gave before) count too.
    s.foreign.remove([feed(1)]);
    await e.sync();
    expect((await e.subscriptions({ subscribed: true })).map((x) => x.guid).sort()).toEqual([feed(2), feed(9)]);
  });

  it('mygpo whose clock steps back an hour and then forward again: nothing the device knew or did is lost (chaos gPodder seeds 181 266 544 590 674)', async () => {
    const clock = { now: 1_700_000_000_000 };
    const s = await gpodder('mygpo', clock);
    const e = engine(s);
    s.foreign.add([feed(1), feed(2)]);
    await e.sync();
    // The server's clock goes back an hour: everything it stamped is in its future, and mygpo lists nothing
    // after its "now", so its full listing is empty. Feed 2 must not be tombstoned (it is said again), and the
    // unsubscribe of feed 1 must be sent.
    clock.now -= 3_600_000;
    await e.update(feed(1), { isSubscribed: false });
    await e.sync();
    await settle(e);
    expect((await e.subscriptions({ subscribed: true })).map((x) => x.guid)).toEqual([feed(2)]);
    expect(s.subscribed({ device: 'web-player' })).toEqual([feed(2)]);
    // Its clock is right again. A window from the last cursor would now hold feed 1's old subscribe (stamped
    // after the unsubscribe, made while the clock was behind) without the unsubscribe: one full listing instead.
    clock.now += 3_600_000 + 60_000;
    await e.sync();
    expect((await e.subscriptions({ subscribed: true })).map((x) => x.guid)).toEqual([feed(2)]);
    expect(s.subscribed({ device: 'web-player' })).toEqual([feed(2)]);
    // And then back to plain windows.
    s.foreign.add([feed(3)]);
    await e.sync();
    expect((await e.subscriptions({ subscribed: true })).map((x) => x.guid).sort()).toEqual([feed(2), feed(3)]);
    const sinces = s.log().filter((r) => r.method === 'GET' && r.path.includes('/subscriptions/')).map((r) => Number(r.query.since));
    expect(sinces.at(-1)).toBeGreaterThan(1_700_000_000);
  });

  it('a store that first pulled while the server clock was behind reads one full listing when that clock jumps forward (chaos gPodder seed 839)', async () => {
    const clock = { now: 1_700_000_000_000 };
    const s = await gpodder('mygpo', clock);
    s.foreign.add([feed(1)]);
    clock.now -= 3_600_000;
    // Another device unsubscribes while the server's clock is behind: stamped before the subscribe.
    s.foreign.remove([feed(1)]);
    const e = engine(s);
    await e.sync();
    expect((await e.subscriptions({ subscribed: true })).map((x) => x.guid)).toEqual([]);
    // The clock is right again. A window from the last answer's time holds the old subscribe but not the
    // unsubscribe (mygpo nets a window by stamps): read as a step forward, the pull is one full listing.
    clock.now += 3_600_000 + 60_000;
    await e.sync();
    expect(s.subscribed()).toEqual([]);
    expect((await e.subscriptions({ subscribed: true })).map((x) => x.guid)).toEqual([]);
    const sinces = s.log().filter((r) => r.method === 'GET' && r.path.includes('/subscriptions/')).map((r) => Number(r.query.since));
    expect(sinces.at(-1)).toBe(0);
  });

  it('remove() of a feed a full listing left out while a subscribe of it was queued still unsubscribes it (chaos gPodder seed 285)', async () => {
    const clock = { now: 1_700_000_000_000 };
    const s = await gpodder('mygpo', clock);
    const e = engine(s);
    s.foreign.add([feed(1)]);
    await e.sync();
    await e.update(feed(1), { isSubscribed: false });
    await settle(e);
    expect(s.subscribed({ device: 'web-player' })).toEqual([]);
    // A subscribe that cannot go yet; then a full listing (the server's clock jumped) leaves the feed out.
    s.failNext(100, 503, { method: 'POST' });
    await e.update(feed(1), { isSubscribed: true });
    clock.now += 3_600_000;
    await e.sync();
    expect(s.log().filter((r) => r.method === 'GET' && r.path.includes('/subscriptions/')).at(-1)?.query.since).toBe('0');
    // The listener changes their mind: the queued subscribe must not go on its own.
    await e.remove(feed(1));
    s.clearFaults();
    await e.sync();
    await settle(e);
    expect(s.subscribed({ device: 'web-player' })).toEqual([]);
    expect((await e.subscriptions({ subscribed: true })).map((x) => x.guid)).toEqual([]);
  });

  for (const dialect of ['mygpo', 'opodsync'] as const) {
    it(`${dialect}: after its clock steps back, the full listing is the server's word: a feed another device removed after the step is not subscribed here`, async () => {
      const clock = { now: 1_700_000_000_000 };
      const s = await gpodder(dialect, clock);
      const e = engine(s);
      s.foreign.add([feed(1), feed(2)]);
      await e.sync();
      clock.now += 200_000;
      s.foreign.add([feed(3)]);
      await e.sync();
      // The server's clock steps back two minutes: feeds 1 and 2 were stamped before its new "now", feed 3
      // after it (mygpo lists nothing stamped later than its "now": it may be hidden, and is said again).
      clock.now -= 120_000;
      // Another device removes feed 1 after the step: mygpo nets its old subscribe and this unsubscribe to
      // nothing, so its listing leaves feed 1 out; opodsync lists it as removed. Either way it is gone.
      s.foreign.remove([feed(1)]);
      await e.sync();
      await settle(e);
      expect((await e.subscriptions({ subscribed: true })).map((x) => x.guid).sort()).toEqual([feed(2), feed(3)]);
      expect(await e.pending()).toEqual([]);
      expect(s.subscribed().sort()).toEqual([feed(2), feed(3)]);
      // A later change on the server's clock since the step counts too.
      s.foreign.remove([feed(2)]);
      await e.sync();
      expect((await e.subscriptions({ subscribed: true })).map((x) => x.guid)).toEqual([feed(3)]);
    });
  }

  it('a full listing read after the clock went back is the server\'s word whatever the stored stamps say; a window after it compares against it', async () => {
    // The transport marks such a listing's entries (and says which left-out rows it may hide).
    const s = await gpodder('opodsync');
    s.foreign.add([feed(1)]);
    const sink = { ...recordingSink(), cursor: (s.timestamp() + 3600) * 1000, empty: false };
    await pullGpodder(directHttp(s), '/api/2/subscriptions/alice/web-player.json', sink);
    expect(sink.batches.flatMap((b) => b.entries).map((x) => [x.guid, x.authoritative])).toEqual([[feed(1), true]]);
    // The store applies them over stamps from the other side of the step (here: later than the entry's, as a
    // store whose kept offset was lost would hold them).
    const store = createStore(openSyncDatabase(uniqueDb('gpodder-step')), () => 'local-1');
    await store.bind({ server: s.url, protocol: 'gpodder' });
    const entry = (isSubscribed: boolean, at: number, authoritative?: boolean): RemoteEntry => ({
      guid: feed(1), feedUrl: feed(1), isSubscribed, at, dataAt: at, standalone: true, ...(authoritative ? { authoritative } : {}),
    });
    const subscribed = async () => (await store.get(feed(1)))?.isSubscribed;
    await store.applyEntries([entry(true, 5_000_000)], { cursor: 5_000_000 });
    await store.applyEntries([entry(false, 3_000_000)], { cursor: 3_000_000 });
    expect(await subscribed()).toBe(true);
    await store.applyEntries([entry(false, 3_000_000, true)], { cursor: 3_000_000 });
    expect(await subscribed()).toBe(false);
    await store.applyEntries([entry(true, 3_001_000)], { cursor: 3_001_000 });
    expect(await subscribed()).toBe(true);
    store.db.close();
  });

  it('a timestamp of 1e300 is refused as bad-response and stores nothing', async () => {
    const s = await gpodder();
    const e = engine(s, { fetch: answering(() => ({ add: [feed(1)], remove: [], timestamp: 1e300 })) });
    await expect(e.sync()).rejects.toMatchObject({ name: 'SyncError', code: 'bad-response' });
    expect(await e.subscriptions()).toEqual([]);
    expect((await e.status()).cursor).toBeUndefined();
  });
});

describe('gPodder: a huge answer (item 13)', () => {
  it(`50,000 URLs are written in batches of ${PULL_BATCH}, the cursor with the last one only`, async () => {
    const s = await gpodder();
    const urls = Array.from({ length: 50_000 }, (_, i) => feed(i));
    const http = directHttp(s, answering(() => ({ add: urls, remove: [], timestamp: 1_700_000_123 })));
    const sink = recordingSink();
    expect((await pullGpodder(http, 'api/2/subscriptions/alice/web-player.json', sink)).committed).toBe(true);
    expect(sink.batches).toHaveLength(50_000 / PULL_BATCH);
    expect(sink.batches.every((b) => b.entries.length === PULL_BATCH)).toBe(true);
    expect(sink.batches.filter((b) => 'cursor' in b).map((b) => b.cursor)).toEqual([1_700_000_123_000]);
    expect('cursor' in sink.batches[sink.batches.length - 1]!).toBe(true);
  });

  it(`an answer naming more than ${MAX_ANSWER_URLS} URLs is refused as bad-response before anything is written`, async () => {
    const s = await gpodder();
    const many = Array.from({ length: MAX_ANSWER_URLS / 2 + 1 }, (_, i) => feed(i));
    const http = directHttp(s, answering(() => ({ add: many, remove: many, timestamp: 1_700_000_123 })));
    const sink = recordingSink();
    await expect(pullGpodder(http, 'api/2/subscriptions/alice/web-player.json', sink)).rejects.toMatchObject({ code: 'bad-response' });
    expect(sink.batches).toEqual([]);
  });
});

describe('gPodder: update_urls that loop (item 17)', () => {
  it('a→b and b→a, both listed: two subscriptions, each one\'s guid its feed URL', async () => {
    const s = await gpodder();
    const [a, b] = [feed('a'), feed('b')];
    const e = engine(s, { fetch: answering(() => ({ add: [a, b], remove: [], timestamp: 1_700_000_123, update_urls: [[a, b], [b, a]] })) });
    await e.sync();
    const subs = await e.subscriptions();
    expect(subs.map((x) => x.guid).sort()).toEqual([a, b]);
    for (const sub of subs) expect(sub.feedUrl).toBe(sub.guid);
  });

  it('a loop in an upload answer moves nothing: each added URL keeps its row', async () => {
    const s = await gpodder();
    const [a, b] = [feed('a'), feed('b')];
    const looping: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (init?.method !== 'POST' || !/subscriptions\//.test(String(input))) return response;
      const body = (await response.json()) as { timestamp: number };
      return Response.json({ timestamp: body.timestamp, update_urls: [[a, b], [b, a]] });
    };
    const e = engine(s, { fetch: looping });
    await e.sync();
    await e.add(a);
    await e.add(b);
    await settle(e);
    const subs = await e.subscriptions();
    expect(subs.map((x) => x.guid).sort()).toEqual([a, b]);
    for (const sub of subs) expect(sub.feedUrl).toBe(sub.guid);
  });
});
