// Issue 16, item 2: remove() keeps the subscription's queued edits behind the DELETE. They are dropped only once
// the deletion succeeded; when the server refuses it or rolls it back, they are sent (or listed in failed()).
import { afterEach, describe, expect, it } from 'vitest';
import { startGpodderServer } from '../server/gpodder/server.ts';
import type { GpodderServer } from '../server/gpodder/types.ts';
import { wallTime } from '../server/listen.ts';
import { createSyncEngine, type SyncEngine } from '../../worker/index.ts';
import { engine, requests, server, settle, uniqueDb } from './helpers.ts';

describe('remove() with queued edits (OPA)', () => {
  it('a deletion job that FAILS: the edits queued before remove() are sent after it', async () => {
    const s = await server({ seed: 3 });
    s.deletionOutcome('failure');
    const e = engine(s);
    await e.sync();
    const guid = s.state()[1]!.guid;
    // Offline: the edit stays queued (not in flight) when remove() comes.
    e.setOnline(false);
    await e.update(guid, { isSubscribed: false, feedUrl: 'https://feeds.example/kept.xml' });
    await e.remove(guid);
    expect((await e.pending()).map((c) => c.kind)).toEqual(['remove', 'update']);
    e.setOnline(true);
    await settle(e);
    // The server rolled the deletion back, so the edit still matters: it reached the server.
    expect(s.entry(guid)).toMatchObject({ feed_url: 'https://feeds.example/kept.xml', is_subscribed: false });
    expect(s.entry(guid)?.deleted).toBeUndefined();
    expect((await e.failed()).map((c) => c.kind)).toEqual(['remove']);
    expect(await e.pending()).toEqual([]);
    expect(await e.subscription(guid)).toMatchObject({ feedUrl: 'https://feeds.example/kept.xml', isSubscribed: false });
    // The DELETE went first: a deletion that succeeds makes the edit moot, so it waits behind it.
    const order = s.log().filter((r) => (r.method === 'DELETE' || r.method === 'PATCH') && r.path.includes(guid)).map((r) => r.method);
    expect(order).toEqual(['DELETE', 'PATCH']);
  });

  it('a DELETE the server refuses (405): the edits are sent after it', async () => {
    const s = await server({ seed: 3 });
    const e = engine(s);
    await e.sync();
    const guid = s.state()[0]!.guid;
    e.setOnline(false);
    await e.update(guid, { isSubscribed: false });
    await e.remove(guid);
    s.failNext(1, 405, { method: 'DELETE' });
    e.setOnline(true);
    await settle(e);
    expect(s.entry(guid)).toMatchObject({ is_subscribed: false });
    const [failed, ...rest] = await e.failed();
    expect(rest).toEqual([]);
    expect(failed).toMatchObject({ kind: 'remove', guid, reason: { status: 405 } });
  });

  it('a deletion that succeeds drops the edits without sending them', async () => {
    const s = await server({ seed: 3 });
    const e = engine(s);
    await e.sync();
    const guid = s.state()[2]!.guid;
    e.setOnline(false);
    await e.update(guid, { feedUrl: 'https://feeds.example/moot.xml' });
    await e.remove(guid);
    e.setOnline(true);
    await settle(e);
    expect(s.entry(guid)?.deleted).toBeDefined();
    expect(requests(s, 'PATCH')).toEqual([]);
    expect(await e.pending()).toEqual([]);
    expect(await e.failed()).toEqual([]);
    expect(await e.subscription(guid)).toMatchObject({ guid, deleted: expect.any(String) });
  });

  it('re-adding after remove() is a new intent: it survives the deletion', async () => {
    const s = await server({ seed: 2 });
    const e = engine(s);
    await e.sync();
    const { guid, feed_url: url } = s.state()[0]!;
    e.setOnline(false);
    await e.update(guid, { isSubscribed: false });
    await e.remove(guid);
    await e.add(url, { guid });
    e.setOnline(true);
    await settle(e);
    expect(s.entry(guid)).toMatchObject({ is_subscribed: true });
    expect(s.entry(guid)?.deleted).toBeUndefined();
    expect(await e.subscription(guid)).toMatchObject({ isSubscribed: true, pending: false });
  });

  it('an add that never left the device needs no DELETE: remove() drops it and its edits', async () => {
    const s = await server({ seed: 1 });
    const e = engine(s);
    await e.sync();
    e.setOnline(false);
    const added = await e.add('https://feeds.example/local-only.xml');
    await e.update(added.guid, { isSubscribed: false });
    await e.remove(added.guid);
    expect(await e.pending()).toEqual([]);
    e.setOnline(true);
    await settle(e);
    expect(requests(s, 'POST')).toEqual([]);
    expect(requests(s, 'DELETE')).toEqual([]);
  });
});

describe('remove() with queued edits (gPodder: remove is an unsubscribe)', () => {
  const open: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    while (open.length) await open.pop()!.close().catch(() => undefined);
  });
  async function gpodder(): Promise<GpodderServer> {
    let now = 1_700_000_000_000;
    const s = await startGpodderServer({ port: 0, dialect: 'opodsync', time: { ...wallTime, now: () => (now += 1000) } });
    open.push(s);
    return s;
  }
  function gEngine(s: GpodderServer): SyncEngine {
    const e = createSyncEngine({
      protocol: 'gpodder',
      baseUrl: s.url,
      auth: { type: 'basic', username: 'alice', password: 'alice-password' },
      device: 'web-player',
      dbName: uniqueDb('held-gpodder'),
      pullInterval: 0,
      pushDelay: 0,
      timeout: 2000,
      retry: { baseDelay: 10, maxDelay: 100 },
    });
    open.push(e);
    return e;
  }
  const feed = (n: number | string) => `https://feeds.example/show-${n}.xml`;

  it('an upload refusing the unsubscribe (400): the move queued before it is still uploaded', async () => {
    const s = await gpodder();
    s.foreign.add([feed(1), feed(2)]);
    const e = gEngine(s);
    await e.sync();
    e.setOnline(false);
    await e.update(feed(1), { feedUrl: feed('1-moved') });
    await e.remove(feed('1-moved'));
    s.failNext(1, 400, { method: 'POST', path: /subscriptions/ });
    e.setOnline(true);
    await settle(e);
    // The unsubscribe was refused, so the feed stays; the move the user made before it still happened.
    expect(s.subscribed({ device: 'web-player' }).sort()).toEqual([feed('1-moved'), feed(2)].sort());
    expect((await e.failed()).map((c) => c.kind)).toEqual(['remove']);
    expect(await e.pending()).toEqual([]);
  });

  it('an unsubscribe that succeeds drops the move queued before it', async () => {
    const s = await gpodder();
    s.foreign.add([feed(1), feed(2)]);
    const e = gEngine(s);
    await e.sync();
    e.setOnline(false);
    await e.update(feed(1), { feedUrl: feed('1-moved') });
    await e.remove(feed('1-moved'));
    e.setOnline(true);
    await settle(e);
    expect(s.subscribed({ device: 'web-player' })).toEqual([feed(2)]);
    expect(await e.failed()).toEqual([]);
    const uploads = s.log().filter((r) => r.method === 'POST' && /subscriptions/.test(r.path));
    expect(uploads).toHaveLength(1);
  });
});
