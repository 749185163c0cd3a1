// What the engine tells a UI without a join or an error code: queue changes as events, the feed URL of each
// queued change, offline apart from unreachable, and a 410 reconciled by a pull at once.
import { describe, expect, it } from 'vitest';
import type { ChangeEvent } from '../../src/types.ts';
import { engine, server, until } from './helpers.ts';

describe('engine signals for a UI', () => {
  it('a change whose retry state alone changed (attempts, error) sends a change event flagged queue', async () => {
    const s = await server({ seed: 2 });
    const e = engine(s, { retry: { baseDelay: 60_000, maxDelay: 60_000 } });
    await e.sync();
    const guid = s.state()[0]!.guid;
    const events: ChangeEvent[] = [];
    e.on('change', (event) => events.push(event));
    s.failNext(1, 503, { method: 'PATCH' });
    await e.update(guid, { isSubscribed: false });
    expect(events[0]).toEqual({ guids: [guid], queue: true });
    await until(() => events.some((event) => event.guids.length === 0 && event.queue), 5000, 'a queue event');
    expect((await e.pending())[0]).toMatchObject({ attempts: 1, lastError: { status: 503 } });
  });

  it('another tab hears of queue changes too', async () => {
    const s = await server({ seed: 2 });
    const a = engine(s);
    await a.sync();
    const b = engine(s, { dbName: a.dbName });
    const heard: ChangeEvent[] = [];
    b.on('change', (event) => heard.push(event));
    a.setOnline(false);
    await a.update(s.state()[0]!.guid, { isSubscribed: false });
    await until(() => heard.some((event) => event.queue), 5000, 'the other tab');
  });

  it('pending and failed update/remove entries carry the feed URL they are about', async () => {
    const s = await server({ seed: 3 });
    const e = engine(s);
    await e.sync();
    const [x, y, z] = await e.subscriptions();
    e.setOnline(false);
    await e.update(x!.guid, { feedUrl: 'https://moved.example/feed' });
    await e.remove(y!.guid);
    await e.add('https://new.example/feed');
    const pending = await e.pending();
    expect(pending.map((p) => [p.kind, p.feedUrl])).toEqual([
      ['update', x!.feedUrl],
      ['remove', y!.feedUrl],
      ['add', 'https://new.example/feed'],
    ]);
    for (const guid of [x!.guid, z!.guid]) s.failNext(1, 405, { method: 'PATCH', path: `/subscriptions/${guid}` });
    e.setOnline(true);
    await e.update(z!.guid, { isSubscribed: false });
    await until(async () => (await e.failed()).length === 2, 5000, 'the refusals');
    expect((await e.failed()).map((f) => f.feedUrl)).toEqual(expect.arrayContaining([x!.feedUrl, z!.feedUrl]));
  });

  it('status tells the device being offline from the server being unreachable', async () => {
    const s = await server({ seed: 1 });
    const e = engine(s);
    await e.sync();
    expect(await e.status()).toMatchObject({ online: true, network: 'online' });
    s.dropNext(5);
    await expect(e.sync()).rejects.toMatchObject({ code: 'network' });
    expect(await e.status()).toMatchObject({ online: false, network: 'unreachable' });
    e.setOnline(false);
    expect(await e.status()).toMatchObject({ online: false, network: 'offline' });
    s.clearFaults();
    e.setOnline(true);
    await e.sync();
    expect(await e.status()).toMatchObject({ online: true, network: 'online' });
  });

  it('a 410 on a change pulls at once: the deleted subscription leaves the list without waiting for a background pull', async () => {
    const s = await server({ seed: 3 });
    const e = engine(s);
    await e.sync();
    const gone = s.state()[1]!;
    s.foreign.remove(gone.guid);
    await e.update(gone.guid, { isSubscribed: false });
    await until(async () => (await e.failed()).length === 1, 5000, 'the refusal');
    expect((await e.failed())[0]!.reason).toMatchObject({ code: 'gone', status: 410 });
    await until(async () => (await e.subscription(gone.guid))?.deleted !== undefined, 5000, 'the reconciling pull');
    expect((await e.subscriptions()).map((x) => x.guid)).not.toContain(gone.guid);
  });

  it('subscriptions({ guids }) reads only those rows (what a change event names); a bad list is invalid', async () => {
    const s = await server({ seed: 4 });
    const e = engine(s);
    await e.sync();
    const [a, , c] = await e.subscriptions();
    expect(await e.subscriptions({ guids: [c!.guid, 'no-such-guid', a!.guid] })).toEqual(expect.arrayContaining([a, c]));
    expect(await e.subscriptions({ guids: [c!.guid, 'no-such-guid', a!.guid] })).toHaveLength(2);
    await expect(e.subscriptions({ guids: 'x' as unknown as string[] })).rejects.toMatchObject({ code: 'invalid' });
  });
});
