// An edit that changes nothing queues nothing (issue 25): an update equal to the local view writes nothing and
// announces nothing, and a queued change folded back to the state before it leaves the queue.
import { afterEach, describe, expect, it } from 'vitest';
import { startGpodderServer } from '../server/gpodder/server.ts';
import type { GpodderServer } from '../server/gpodder/types.ts';
import { createSyncEngine, type SyncEngine } from '../../worker/index.ts';
import { engine, requests, server, settle, spyFetch, uniqueDb, until } from './helpers.ts';

const writes = (s: { log(): { method: string }[] }) => s.log().filter((r) => r.method !== 'GET');

describe('update() that changes nothing (OPA)', () => {
  it('the subscribed flag or the feed URL the row has already: resolves with the row, no queue entry, no event, no request', async () => {
    const s = await server({ seed: 2 });
    const e = engine(s);
    await e.sync();
    const row = (await e.subscriptions({ subscribed: true }))[0]!;
    const events: unknown[] = [];
    e.on('change', (c) => events.push(c));
    s.clearLog();
    expect(await e.update(row.guid, { isSubscribed: true })).toEqual(row);
    expect(await e.update(row.guid, { feedUrl: row.feedUrl })).toEqual(row);
    expect(await e.update(row.guid, { feedUrl: row.feedUrl, isSubscribed: true, guid: row.guid })).toEqual(row);
    expect(await e.pending()).toEqual([]);
    await e.sync();
    expect(writes(s)).toEqual([]);
    expect(events).toEqual([]);
  });

  it('toggles made offline that end where they began leave nothing queued and send nothing', async () => {
    const s = await server({ seed: 3 });
    const e = engine(s);
    await e.sync();
    const [a, b] = await e.subscriptions({ subscribed: true });
    e.setOnline(false);
    for (let i = 0; i < 10; i++) await e.update(a!.guid, { isSubscribed: i % 2 === 1 });
    // A URL moved away and back, the flag changed with it and back.
    await e.update(b!.guid, { feedUrl: 'https://elsewhere.example/x', isSubscribed: false });
    await e.update(b!.guid, { feedUrl: b!.feedUrl });
    expect(await e.pending()).toHaveLength(1);
    await e.update(b!.guid, { isSubscribed: true });
    expect(await e.pending()).toEqual([]);
    expect(await e.subscription(a!.guid)).toMatchObject({ isSubscribed: true, pending: false });
    s.clearLog();
    e.setOnline(true);
    await settle(e);
    expect(writes(s)).toEqual([]);
  });

  it('a change in flight cannot be taken back: an edit back to the server value made meanwhile is queued and sent', async () => {
    const s = await server({ seed: 2 });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let held = false;
    const e = engine(s, {
      fetch: spyFetch(async (url, init, real) => {
        if (init?.method === 'PATCH' && !held) {
          held = true;
          const answer = await real(url, init);
          await gate;
          return answer;
        }
        return real(url, init);
      }),
    });
    await e.sync();
    const row = (await e.subscriptions({ subscribed: true }))[0]!;
    await e.update(row.guid, { isSubscribed: false });
    await until(() => held, 5000, 'the PATCH to be on its way');
    await e.update(row.guid, { isSubscribed: true });
    expect(await e.pending()).toHaveLength(2);
    release();
    await settle(e);
    expect(requests(s, 'PATCH').map((r) => r.body)).toEqual([{ is_subscribed: false }, { is_subscribed: true }]);
    expect(s.entry(row.guid)?.is_subscribed).toBe(true);
  });

  it('an add not yet acknowledged stays queued when an update folds back to it; a removal and an add again too', async () => {
    const s = await server({ seed: 2 });
    const e = engine(s);
    await e.sync();
    e.setOnline(false);
    const added = await e.add('https://new.example/feed');
    await e.update(added.guid, { isSubscribed: false });
    await e.update(added.guid, { isSubscribed: true });
    expect((await e.pending()).map((c) => c.kind)).toEqual(['add']);
    const row = (await e.subscriptions({ subscribed: true }))[0]!;
    await e.remove(row.guid);
    await e.add(row.feedUrl, { guid: row.guid });
    await e.update(row.guid, { isSubscribed: false });
    await e.update(row.guid, { isSubscribed: true });
    expect((await e.pending()).filter((c) => c.guid === row.guid).map((c) => c.kind)).toEqual(['remove', 'add']);
    e.setOnline(true);
    await settle(e);
    expect(s.entry(row.guid)?.is_subscribed).toBe(true);
    expect(s.state().some((x) => x.feed_url === 'https://new.example/feed' && x.is_subscribed)).toBe(true);
  });
});

describe('update() that changes nothing (gPodder)', () => {
  const open: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    while (open.length) await open.pop()!.close().catch(() => undefined);
  });

  async function gpodder(): Promise<{ s: GpodderServer; e: SyncEngine }> {
    const s = await startGpodderServer({ port: 0, dialect: 'mygpo' });
    open.push(s);
    s.registerDevice('web-player');
    const e = createSyncEngine({
      protocol: 'gpodder',
      baseUrl: s.url,
      auth: { type: 'basic', username: 'alice', password: 'alice-password' },
      device: 'web-player',
      dbName: uniqueDb('noop-gpodder'),
      pullInterval: 0,
      pushDelay: 0,
      retry: { baseDelay: 10, maxDelay: 100 },
    });
    open.push(e);
    return { s, e };
  }

  it('1,000 offline toggles of 100 subscribed feeds that end where they began send nothing', async () => {
    const { s, e } = await gpodder();
    const feed = (n: number) => `https://feeds.example/show-${n}.xml`;
    for (let i = 0; i < 100; i++) await e.add(feed(i));
    await settle(e);
    e.setOnline(false);
    for (let round = 0; round < 10; round++) for (let i = 0; i < 100; i++) await e.update(feed(i), { isSubscribed: round % 2 === 1 });
    expect(await e.pending()).toEqual([]);
    const before = writes(s).length;
    e.setOnline(true);
    await settle(e);
    expect(writes(s).length).toBe(before);
    expect(s.subscribed({ device: 'web-player' }).length).toBe(100);
  });

  it('a feed moved and moved back before it was sent: nothing queued, nothing sent', async () => {
    const { s, e } = await gpodder();
    await e.add('https://feeds.example/a.xml');
    await settle(e);
    e.setOnline(false);
    await e.update('https://feeds.example/a.xml', { feedUrl: 'https://feeds.example/b.xml' });
    await e.update('https://feeds.example/b.xml', { feedUrl: 'https://feeds.example/a.xml' });
    expect(await e.pending()).toEqual([]);
    expect((await e.subscriptions()).map((x) => [x.guid, x.feedUrl, x.pending])).toEqual([['https://feeds.example/a.xml', 'https://feeds.example/a.xml', false]]);
    const before = writes(s).length;
    e.setOnline(true);
    await settle(e);
    expect(writes(s).length).toBe(before);
    expect(s.subscribed({ device: 'web-player' })).toEqual(['https://feeds.example/a.xml']);
  });
});
