import { describe, expect, it } from 'vitest';
import { engine, requests, server, until } from './helpers.ts';

describe('scheduling and lifecycle', () => {
  it('pulls on start, and concurrent sync() calls share one run', async () => {
    const s = await server({ seed: 3, latencyMs: 50 });
    const e = engine(s);
    await until(async () => (await e.status()).lastSuccess !== undefined, 3000, 'the pull on start to finish');
    expect(await e.subscriptions()).toHaveLength(3);
    s.clearLog();
    const [r1, r2, r3] = await Promise.all([e.sync(), e.sync(), e.sync()]);
    expect(r1).toEqual(r2);
    expect(r2).toEqual(r3);
    expect(requests(s, 'GET', '/subscriptions')).toHaveLength(1);
  });

  it('a sync() arriving once a run is pushing gets a run of its own (its change is in the push it waits for)', async () => {
    const s = await server({ seed: 2 });
    const e = engine(s, { pushDelay: 10_000 });
    await e.sync();
    const [a, b] = s.state().map((x) => x.guid);
    await e.update(a!, { isSubscribed: false });
    s.setLatency(200);
    s.clearLog();
    const first = e.sync();
    await until(() => requests(s, 'PATCH').length === 1, 3000, 'the first run pushing');
    await e.update(b!, { isSubscribed: false });
    const second = await e.sync();
    await first;
    expect(requests(s, 'GET', '/subscriptions')).toHaveLength(2);
    expect(s.entry(b!)?.is_subscribed).toBe(false);
    expect(second.pending).toBe(0);
  });

  it('pushes soon after a local change and coalesces a burst', async () => {
    const s = await server({ seed: 1 });
    // Long enough that the whole burst lands inside it even on a loaded machine.
    const e = engine(s, { pushDelay: 500 });
    await e.sync();
    const guid = s.state()[0]!.guid;
    s.clearLog();
    for (const on of [false, true, false, true, false]) await e.update(guid, { isSubscribed: on });
    await until(() => s.entry(guid)?.is_subscribed === false && requests(s, 'PATCH').length > 0, 3000, 'the push');
    expect(requests(s, 'PATCH')).toHaveLength(1);
  });

  it('pulls every pullInterval, and stops everything on close()', async () => {
    const s = await server({ seed: 1 });
    const e = engine(s, { pullInterval: 60 });
    await until(() => requests(s, 'GET', '/subscriptions').length >= 3, 3000, 'periodic pulls');
    await e.close();
    const count = s.log().length;
    await new Promise((r) => setTimeout(r, 250));
    expect(s.log().length).toBe(count);
    expect((await e.status()).phase).toBe('closed');
    await expect(e.sync()).rejects.toMatchObject({ code: 'closed' });
    await expect(e.subscriptions()).rejects.toMatchObject({ code: 'closed' });
  });

  it('offline: nothing is sent, status says so, online resumes', async () => {
    const s = await server({ seed: 1 });
    const e = engine(s);
    await e.sync();
    e.setOnline(false);
    await until(async () => (await e.status()).phase === 'offline', 2000, 'phase offline');
    expect((await e.status()).online).toBe(false);
    await expect(e.sync()).rejects.toMatchObject({ code: 'offline' });
    const guid = s.state()[0]!.guid;
    s.clearLog();
    await e.update(guid, { isSubscribed: false });
    await new Promise((r) => setTimeout(r, 100));
    expect(s.log()).toEqual([]);
    expect((await e.status()).pending).toBe(1);
    e.setOnline(true);
    await until(() => s.entry(guid)?.is_subscribed === false, 3000, 'the replay');
  });

  it('a dead server marks the engine unreachable; the first answer marks it reachable again', async () => {
    const s = await server({ seed: 1 });
    // The engine's own pull retry (10 ms with the helper's options) would race the status read below and could
    // already have answered under load: it waits a minute here, so only the test's own sync() answers.
    const e = engine(s, { retry: { baseDelay: 60_000, maxDelay: 60_000 } });
    await e.sync();
    s.dropNext(1, { method: 'GET' });
    await expect(e.sync()).rejects.toMatchObject({ code: 'network' });
    const status = await e.status();
    expect(status.online).toBe(false);
    expect(status.lastError?.code).toBe('network');
    await e.sync();
    expect((await e.status()).online).toBe(true);
    expect((await e.status()).lastError).toBeUndefined();
    expect((await e.status()).lastSuccess).toBeGreaterThan(Date.now() - 5000);
  });

  it('clear() wipes the store (sign-out) and reports the change', async () => {
    const s = await server({ seed: 4 });
    const e = engine(s);
    await e.sync();
    const changed: string[] = [];
    e.on('change', (c) => changed.push(...c.guids));
    await e.clear();
    expect(await e.subscriptions()).toEqual([]);
    expect((await e.status()).cursor).toBeUndefined();
    expect(changed.sort()).toEqual(s.state().map((x) => x.guid).sort());
    await e.sync();
    expect(await e.subscriptions()).toHaveLength(4);
  });

  it('an unsubscribe function stops its listener; a throwing listener does not break sync', async () => {
    const s = await server({ seed: 2 });
    const e = engine(s);
    const seen: number[] = [];
    const off = e.on('change', (c) => seen.push(c.guids.length));
    e.on('change', () => {
      throw new Error('listener bug');
    });
    const quiet = console.error;
    console.error = () => undefined;
    try {
      await e.sync();
      expect(seen.length).toBeGreaterThan(0);
      off();
      const before = seen.length;
      s.foreign.add('https://later.example/feed');
      await e.sync();
      expect(seen.length).toBe(before);
      expect(await e.subscriptions()).toHaveLength(3);
    } finally {
      console.error = quiet;
    }
  });

  it('rejects unusable options with code invalid', async () => {
    const { createSyncEngine } = await import('../../worker/index.ts');
    expect(() => createSyncEngine({ baseUrl: 'ftp://x.example' })).toThrow(expect.objectContaining({ code: 'invalid' }));
    expect(() => createSyncEngine({ baseUrl: 'not a url' })).toThrow(expect.objectContaining({ code: 'invalid' }));
    expect(() => createSyncEngine({ baseUrl: 'https://x.example', pageSize: 0 })).toThrow(expect.objectContaining({ code: 'invalid' }));
    expect(() =>
      createSyncEngine({ baseUrl: 'https://x.example', auth: { type: 'bearer' } as never }),
    ).toThrow(expect.objectContaining({ code: 'invalid' }));
  });
});
