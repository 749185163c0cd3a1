import { describe, expect, it } from 'vitest';
import { openSyncDatabase } from '../../src/schema.ts';
import { isSyncError } from '../../src/errors.ts';
import { engine, picture, requests, server, serverPicture, settle, spyFetch, until } from './helpers.ts';
import type { RefServer } from '../server/types.ts';

describe('outbox', () => {
  it('update() resolves once the change is durable, and reads show base ⊕ pending', async () => {
    const s = await server({ seed: 3 });
    const e = engine(s);
    await e.sync();
    e.setOnline(false);
    const guid = s.state()[0]!.guid;
    const view = await e.update(guid, { isSubscribed: false });
    expect(view).toMatchObject({ guid, isSubscribed: false, pending: true });
    // Another connection to the same database sees the queued change at once.
    const db = openSyncDatabase(e.dbName);
    const queued = await db.outbox.toArray();
    db.close();
    expect(queued).toHaveLength(1);
    expect(queued[0]).toMatchObject({ guid, kind: 'update', change: { isSubscribed: false } });
    expect(s.entry(guid)?.is_subscribed).toBe(true);
  });

  it('a pull updates the base and keeps pending changes on top', async () => {
    const s = await server({ seed: 2 });
    const e = engine(s);
    await e.sync();
    const guid = s.state()[0]!.guid;
    s.failNext(100, 503, { method: 'PATCH' });
    await e.update(guid, { isSubscribed: false });
    s.foreign.patch(guid, { new_feed_url: 'https://elsewhere.example/feed' });
    await e.sync();
    expect(await e.subscription(guid)).toMatchObject({ feedUrl: 'https://elsewhere.example/feed', isSubscribed: false, pending: true });
    s.clearFaults();
    await settle(e);
    expect(s.entry(guid)).toMatchObject({ feed_url: 'https://elsewhere.example/feed', is_subscribed: false });
  });

  it('coalesces changes to one subscription into one PATCH', async () => {
    const s = await server({ seed: 2 });
    const e = engine(s);
    await e.sync();
    e.setOnline(false);
    const guid = s.state()[1]!.guid;
    await e.update(guid, { isSubscribed: false });
    await e.update(guid, { feedUrl: 'https://a.example/1' });
    await e.update(guid, { isSubscribed: true });
    await e.update(guid, { feedUrl: 'https://a.example/2' });
    await e.update(guid, { isSubscribed: false });
    expect(await e.pending()).toHaveLength(1);
    s.clearLog();
    e.setOnline(true);
    await settle(e);
    const patches = requests(s, 'PATCH');
    expect(patches).toHaveLength(1);
    expect(patches[0]!.body).toEqual({ is_subscribed: false, new_feed_url: 'https://a.example/2' });
    expect(s.entry(guid)).toMatchObject({ is_subscribed: false, feed_url: 'https://a.example/2' });
  });

  it('keeps order per subscription: the add before changes to what it added', async () => {
    const s = await server();
    const e = engine(s);
    e.setOnline(false);
    const added = await e.add('https://new.example/feed.xml');
    expect(added).toMatchObject({ feedUrl: 'https://new.example/feed.xml', isSubscribed: true, pending: true });
    await e.update(added.guid, { isSubscribed: false });
    e.setOnline(true);
    await settle(e);
    const order = s.log().filter((r) => r.method !== 'GET').map((r) => r.method);
    expect(order).toEqual(['POST', 'PATCH']);
    const [entry] = s.state();
    expect(entry).toMatchObject({ feed_url: 'https://new.example/feed.xml', is_subscribed: false });
    // The local placeholder resolves to the server's guid.
    expect((await e.subscription(added.guid))?.guid).toBe(entry!.guid);
    expect(picture(await e.subscriptions())).toEqual(serverPicture(s));
  });

  it('a guid change goes before changes addressed to the new guid; an edit made in flight stays queued', async () => {
    const s = await server({ seed: 1, latencyMs: 150 });
    const e = engine(s);
    await e.sync();
    const old = s.state()[0]!.guid;
    await e.update(old, { guid: 'renamed-guid' });
    await until(() => requests(s, 'PATCH').length === 1, 3000, 'the PATCH in flight');
    await e.update('renamed-guid', { isSubscribed: false });
    await settle(e);
    const patches = requests(s, 'PATCH');
    expect(patches.map((p) => p.body)).toEqual([{ new_guid: 'renamed-guid' }, { is_subscribed: false }]);
    expect(s.entry('renamed-guid')).toMatchObject({ guid: 'renamed-guid', is_subscribed: false });
    expect((await e.subscription(old))?.guid).toBe('renamed-guid');
  });

  it('merges the response into the base (server timestamps)', async () => {
    const s = await server({ seed: 1 });
    const e = engine(s);
    await e.sync();
    const guid = s.state()[0]!.guid;
    await e.update(guid, { isSubscribed: false });
    await settle(e);
    const local = await e.subscription(guid);
    expect(local?.pending).toBe(false);
    expect(local?.subscriptionChanged).toBe(s.entry(guid)?.subscription_changed);
  });

  it('retries 5xx, 408, 429 and dropped connections, honouring Retry-After', async () => {
    const s = await server({ seed: 4 });
    const e = engine(s);
    await e.sync();
    const [a, b, c, d] = s.state().map((x) => x.guid);
    s.failNext(1, 503, { method: 'PATCH', path: `/subscriptions/${a}` }, { retryAfter: 1 });
    s.failNext(1, 408, { method: 'PATCH', path: `/subscriptions/${b}` });
    s.failNext(2, 429, { method: 'PATCH', path: `/subscriptions/${c}` });
    s.dropNext(1, { method: 'PATCH', path: `/subscriptions/${d}` });
    for (const guid of [a, b, c, d]) await e.update(guid!, { isSubscribed: false });
    await settle(e, 10_000);
    for (const guid of [a, b, c, d]) expect(s.entry(guid!)?.is_subscribed).toBe(false);
    const tries = requests(s, 'PATCH', a!);
    expect(tries.map((t) => t.status)).toEqual([503, 200]);
    expect(tries[1]!.at - tries[0]!.at).toBeGreaterThanOrEqual(950);
    expect(requests(s, 'PATCH', c!).map((t) => t.status)).toEqual([429, 429, 200]);
    expect(await e.failed()).toEqual([]);
  });

  it('pauses on 401 without dropping anything, and resumes on setAuth', async () => {
    const s = await server({ seed: 2, token: 'fresh-token' });
    const e = engine(s);
    await expect(e.sync()).rejects.toMatchObject({ code: 'unauthorized', status: 401 });
    expect((await e.status()).phase).toBe('auth-required');
    await e.setAuth({ type: 'bearer', token: 'fresh-token' });
    await until(async () => (await e.subscriptions()).length === 2, 3000, 'the pull after setAuth');
    const guid = s.state()[0]!.guid;
    await e.setAuth({ type: 'bearer', token: 'expired' });
    await e.update(guid, { isSubscribed: false });
    await until(async () => (await e.status()).phase === 'auth-required', 3000, 'auth-required');
    expect(await e.pending()).toHaveLength(1);
    expect(s.entry(guid)?.is_subscribed).toBe(true);
    await e.setAuth({ type: 'bearer', token: 'fresh-token' });
    await until(() => s.entry(guid)?.is_subscribed === false, 3000, 'the replay after setAuth');
    await until(async () => (await e.pending()).length === 0, 3000, 'an empty queue');
    expect((await e.status()).phase).not.toBe('auth-required');
  });

  it('puts refusals in failed() with the server message, without blocking other subscriptions', async () => {
    const s = await server({ seed: 3 });
    const e = engine(s);
    await e.sync();
    const [a, b, c] = s.state().map((x) => x.guid);
    s.failNext(1, 405, { method: 'PATCH', path: `/subscriptions/${a}` });
    s.failNext(1, 400, { method: 'PATCH', path: `/subscriptions/${c}` });
    s.foreign.remove(b!);
    await e.update(a!, { isSubscribed: false });
    await e.update(b!, { isSubscribed: false });
    await e.update(c!, { feedUrl: 'https://fine.example/feed' });
    await settle(e);
    const failed = await e.failed();
    expect(failed.map((f) => [f.guid, f.reason.code, f.reason.status])).toEqual(
      expect.arrayContaining([
        [a, 'invalid', 405],
        [c, 'invalid', 400],
      ]),
    );
    expect(failed.find((f) => f.guid === a)?.reason.message).toContain('Input could not be validated');
    const forB = failed.find((f) => f.guid === b);
    expect(['gone', 'not-found']).toContain(forB?.reason.code);
    // A refused change no longer shapes the view; the server's state shows.
    expect((await e.subscription(a!))?.isSubscribed).toBe(true);
    expect((await e.status()).failed).toBe(3);
    // retry sends it again; discard drops it.
    const retryId = failed.find((f) => f.guid === a)!.id;
    await e.retry(retryId);
    await settle(e);
    expect(s.entry(a!)?.is_subscribed).toBe(false);
    await e.discard(failed.find((f) => f.guid === c)!.id);
    expect((await e.failed()).map((f) => f.guid)).toEqual([b]);
    await expect(e.retry(123456)).rejects.toMatchObject({ code: 'not-found' });
  });

  it('deletes: DELETE, deletion id kept and polled, then a tombstone', async () => {
    const s = await server({ seed: 2 });
    s.setDeletionDelay(150);
    const e = engine(s);
    await e.sync();
    const guid = s.state()[0]!.guid;
    await e.remove(guid);
    expect((await e.subscriptions()).map((x) => x.guid)).not.toContain(guid);
    const withId = await until(async () => (await e.pending()).find((p) => p.deletionId !== undefined), 3000, 'a deletion id');
    expect(withId.kind).toBe('remove');
    expect((await e.deletion(withId.deletionId!)).status).toBe('PENDING');
    await settle(e);
    expect((await e.deletion(withId.deletionId!)).status).toBe('SUCCESS');
    expect(s.entry(guid)?.deleted).toBeDefined();
    expect((await e.subscriptions({ includeDeleted: true })).find((x) => x.guid === guid)?.deleted).toBeDefined();
    expect(requests(s, 'GET', '/deletions/').length).toBeGreaterThanOrEqual(1);
  });

  it('a deletion that FAILS on the server brings the subscription back and lands in failed()', async () => {
    const s = await server({ seed: 2 });
    s.deletionOutcome('failure');
    const e = engine(s);
    await e.sync();
    const guid = s.state()[1]!.guid;
    await e.remove(guid);
    await settle(e);
    expect(await e.subscription(guid)).toMatchObject({ guid, pending: false });
    expect((await e.subscription(guid))?.deleted).toBeUndefined();
    const [failed] = await e.failed();
    expect(failed).toMatchObject({ kind: 'remove', guid });
    expect(failed!.reason.message).toMatch(/rolled back/);
    await expect(e.deletion(987654)).rejects.toMatchObject({ code: 'not-found', status: 404 });
  });

  it('rejects bad input at once with code invalid and queues nothing', async () => {
    const s = await server({ seed: 1 });
    const e = engine(s);
    await e.sync();
    const guid = s.state()[0]!.guid;
    const attempts = [
      e.add('ftp://files.example/feed'),
      e.add('not a url'),
      e.update(guid, { feedUrl: 'javascript:alert(1)' }),
      e.update(guid, {}),
      e.update(guid, { isSubscribed: 'yes' as unknown as boolean }),
      e.update('', { isSubscribed: false }),
      e.deletion(1.5),
    ];
    for (const attempt of attempts) {
      const error = await attempt.then(() => undefined, (err: unknown) => err);
      expect(isSyncError(error)).toBe(true);
      expect(error).toMatchObject({ code: 'invalid' });
    }
    await expect(e.update('no-such-guid', { isSubscribed: false })).rejects.toMatchObject({ code: 'not-found' });
    expect(await e.pending()).toEqual([]);
  });

  it('a 2xx whose body is not the answer (captive portal) keeps the change, sends it again and pulls', async () => {
    const s = await server({ seed: 1 });
    const e = engine(s);
    await e.sync();
    const guid = s.state()[0]!.guid;
    // Not even handled by the server: a portal's page with status 200.
    s.failNext(1, 200, { method: 'PATCH' }, { body: '<html>Sign in to the hotel Wi-Fi</html>', contentType: 'text/html' });
    s.clearLog();
    await e.update(guid, { isSubscribed: false });
    await until(() => requests(s, 'GET', '/subscriptions').length > 0, 3000, 'the reconciling pull');
    await until(() => s.entry(guid)?.is_subscribed === false, 3000, 'the second PATCH');
    await until(async () => (await e.pending()).length === 0, 3000, 'an empty queue');
    expect(requests(s, 'PATCH').map((r) => r.status)).toEqual([200, 200]);
    expect(await e.subscription(guid)).toMatchObject({ isSubscribed: false, pending: false });
  });

  it('removing an add that never left the device sends nothing', async () => {
    const s = await server();
    const e = engine(s);
    e.setOnline(false);
    const added = await e.add('https://never.example/feed');
    await e.remove(added.guid);
    expect(await e.pending()).toEqual([]);
    expect(await e.subscriptions({ includeDeleted: true })).toEqual([]);
    e.setOnline(true);
    await e.sync();
    expect(s.log().filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('an add the server refuses after remove() leaves nothing to retry: the removal is what holds (chaos seed 1149)', async () => {
    const s = await server();
    const e = engine(s, { retry: { baseDelay: 60_000, maxDelay: 60_000 } });
    // The first POST fails transiently: the add may have reached the server, so edits queue behind it.
    s.failNext(1, 503, { method: 'POST' });
    const added = await e.add('https://refused.example/feed');
    await until(async () => (await e.pending()).some((p) => p.attempts === 1), 3000, 'the add to fail once');
    await e.update(added.guid, { guid: 'renamed-after-the-post' });
    await e.remove('renamed-after-the-post');
    s.failNext(1, 410, { method: 'POST' });
    await e.sync();
    await settle(e);
    // Retrying a refused add would send it without the rename remove() dropped: the refused add goes too.
    expect(await e.failed()).toEqual([]);
    expect(await e.pending()).toEqual([]);
    expect((await e.subscriptions()).map((x) => x.feedUrl)).not.toContain('https://refused.example/feed');
    expect(s.state().map((x) => x.feed_url)).not.toContain('https://refused.example/feed');
  });
});

describe('outbox after an outage', () => {
  it('sync() sends a change waiting out its backoff at once (the pull answered), but nothing before a Retry-After ends', async () => {
    const s = await server({ seed: 2 });
    const e = engine(s, { retry: { baseDelay: 60_000, maxDelay: 60_000 } });
    await e.sync();
    const [a, b] = s.state().map((x) => x.guid);
    s.failNext(1, 503, { method: 'PATCH', path: `/subscriptions/${a}` });
    await e.update(a!, { isSubscribed: false });
    await until(async () => (await e.pending())[0]?.attempts === 1, 3000, 'the PATCH to fail once');
    expect((await e.status()).lastError?.code).toBe('server');
    expect((await e.sync()).pushed).toBe(1);
    expect(s.entry(a!)?.is_subscribed).toBe(false);
    expect((await e.status()).lastError).toBeUndefined();
    // A Retry-After is the server's word for every request: the pull's answer does not lift it.
    s.failNext(1, 503, { method: 'PATCH', path: `/subscriptions/${b}` }, { retryAfter: 3600 });
    await e.update(b!, { isSubscribed: false });
    await until(async () => (await e.pending())[0]?.attempts === 1, 3000, 'the PATCH to be refused');
    await e.update(a!, { isSubscribed: true });
    expect((await e.sync()).pushed).toBe(0);
    expect(s.entry(a!)?.is_subscribed).toBe(false);
    expect((await e.pending()).map((p) => p.guid).sort()).toEqual([a, b].sort());
  });
});

describe('the backoff belongs to the server, not to each change (issue 31)', () => {
  it("a new edit waits while a failed request's backoff runs; the next request carries both", async () => {
    const s = await server({ seed: 3 });
    const e = engine(s, { retry: { baseDelay: 60_000, maxDelay: 60_000 } });
    await e.sync();
    const [a, c] = s.state().map((x) => x.guid);
    s.failNext(1, 503, { method: 'PATCH', path: `/subscriptions/${a}` });
    await e.update(a!, { isSubscribed: false });
    await until(async () => (await e.pending())[0]?.attempts === 1, 3000, 'the PATCH to fail once');
    s.clearLog();
    await e.update(c!, { isSubscribed: false });
    // A run whose pull fails pushes without the server's answer: the held server sends nothing.
    s.failNext(1, 500, { method: 'GET' });
    await expect(e.sync()).rejects.toMatchObject({ code: 'server' });
    expect(s.log().filter((r) => r.method === 'PATCH')).toEqual([]);
    expect((await e.pending()).map((p) => p.guid).sort()).toEqual([a, c].sort());
    // A pull that answers ends the backoff: both go.
    expect((await e.sync()).pushed).toBe(2);
    expect(s.entry(a!)?.is_subscribed).toBe(false);
    expect(s.entry(c!)?.is_subscribed).toBe(false);
    expect(await e.pending()).toEqual([]);
  });
});

describe('an add whose answer was lost', () => {
  it('is never folded away, and a pull that saw it first leaves no second row', async () => {
    const s = await server();
    const e = engine(s, { pushDelay: 60_000 });
    await e.sync();
    const added = await e.add('https://lost-answer.example/feed.xml');
    s.dropNext(1, { method: 'POST' }, { afterHandling: true });
    await e.sync();
    expect(s.state()).toHaveLength(1);
    expect((await e.pending()).map((p) => p.kind)).toEqual(['add']);
    // Renamed and unsubscribed while the add's fate is unknown; then a pull lists the server's entry.
    await e.update(added.guid, { guid: 'renamed-after-lost-add', isSubscribed: false });
    await settle(e);
    expect(s.state()).toHaveLength(1);
    expect(s.state()[0]).toMatchObject({ guid: 'renamed-after-lost-add', is_subscribed: false });
    expect(picture(await e.subscriptions())).toEqual(serverPicture(s));
    // Removing it now deletes it on the server too.
    await e.remove('renamed-after-lost-add');
    await settle(e);
    expect(s.state()[0]?.deleted).toBeDefined();
  });
});

describe('an add whose answer was lost, then another device (issue 26: never a second copy that changes the result)', () => {
  // No retry of its own between the steps: the next attempt is the test's sync(), which pulls first.
  const slow = { pushDelay: 60_000, retry: { baseDelay: 60_000, maxDelay: 60_000 } };
  const feed = 'https://lost-then-foreign.example/feed.xml';

  /** An add whose POST the server applied but whose answer was lost; then `foreign` (another device), then a sync. */
  async function lostThen(foreign: (s: RefServer, guid: string) => void) {
    const s = await server({ seed: 2 });
    const e = engine(s, slow);
    await e.sync();
    await e.add(feed);
    s.dropNext(1, { method: 'POST' }, { afterHandling: true });
    await e.sync();
    const { guid } = s.state().find((x) => x.feed_url === feed)!;
    foreign(s, guid);
    s.clearLog();
    await settle(e);
    expect(requests(s, 'POST')).toHaveLength(0);
    expect(picture(await e.subscriptions())).toEqual(serverPicture(s));
    return s.entry(guid);
  }

  it("is not sent again over another device's unsubscribe: the server took it, and what came after stands", async () => {
    expect(await lostThen((s, guid) => s.foreign.patch(guid, { is_subscribed: false }))).toMatchObject({ is_subscribed: false });
  });

  it("the engine's own retry pulls first: another device's unsubscribe right after the lost answer stands", async () => {
    const s = await server({ seed: 2 });
    let cut = true;
    // The POST reaches the server, another device unsubscribes the new feed at once, and the answer is lost.
    const fetch = spyFetch(async (url, init, real) => {
      const response = await real(url, init);
      if (init?.method !== 'POST' || !cut) return response;
      cut = false;
      s.foreign.patch(s.state().find((x) => x.feed_url === feed)!.guid, { is_subscribed: false });
      throw new TypeError('connection reset');
    });
    const e = engine(s, { pushDelay: 60_000, fetch });
    await e.sync();
    await e.add(feed);
    await e.sync();
    await until(async () => (await e.pending()).length === 0);
    expect(requests(s, 'POST')).toHaveLength(1);
    expect(s.state().find((x) => x.feed_url === feed)).toMatchObject({ is_subscribed: false });
    expect(picture(await e.subscriptions())).toEqual(serverPicture(s));
  });

  it("is not sent again over another device's deletion", async () => {
    expect((await lostThen((s, guid) => s.foreign.remove(guid)))?.deleted).toBeDefined();
  });

  it('a sent add whose POST never arrived is delivered, though the pull lists its feed stamped after the cursor (our own unsubscribe)', async () => {
    const s = await server({ seed: 2 });
    // Edits go at once (a push, no pull): the row's server stamp passes the cursor with our own acknowledged PATCH.
    const e = engine(s, { retry: slow.retry });
    await e.sync();
    const { guid, feed_url } = s.state()[0]!;
    await e.update(guid, { isSubscribed: false });
    await until(async () => (await e.pending()).length === 0 && s.entry(guid)?.is_subscribed === false);
    // Subscribed again; the POST is lost on its way (the server never sees it).
    s.dropNext(1, { method: 'POST' });
    await e.add(feed_url);
    await until(async () => (await e.pending())[0]?.attempts === 1);
    expect(s.entry(guid)).toMatchObject({ is_subscribed: false });
    // The next attempt pulls first: it lists our own unsubscribe, which says nothing of the add.
    await settle(e);
    expect(s.entry(guid)).toMatchObject({ is_subscribed: true });
    expect(picture(await e.subscriptions())).toEqual(serverPicture(s));
  });
});
