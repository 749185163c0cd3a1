// 401 in the middle of things: the token expires while a queue is being delivered, or between the pages of a
// pull. Nothing is dropped or moved to failed(), nothing more is sent while paused, status says auth-required,
// and setAuth() resumes where it stopped.
import { describe, expect, it } from 'vitest';
import { checkInvariants, cursorViolations } from '../chaos/invariants.ts';
import { Model } from '../chaos/model.ts';
import { prng } from '../chaos/prng.ts';
import { createTransport } from '../chaos/transport.ts';
import { engine, requests, server, settle, until } from './helpers.ts';

describe('chaos: 401 mid-queue', () => {
  it('a token that expires after two PATCHes: the rest stay queued, nothing is sent until setAuth, then everything lands', async () => {
    const s = await server({ seed: 6, token: 'fresh' });
    const transport = createTransport({ serverOrigin: s.origin, otherOrigin: 'http://127.0.0.1:9', rng: prng(1) });
    // One at a time, so "the middle of the queue" is well defined.
    const e = engine(s, { auth: { type: 'bearer', token: 'fresh' }, fetch: transport.fetch, retry: { baseDelay: 10, maxDelay: 200, concurrency: 1 } });
    const model = new Model();
    for (const view of s.state()) model.fromServer(view);
    await e.sync();
    e.setOnline(false);
    const guids = s.state().map((x) => x.guid);
    for (const [i, guid] of guids.entries()) {
      const change = i % 2 ? { feedUrl: `https://auth.example/${i}.xml` } : { isSubscribed: false };
      await e.update(guid, change);
      model.localUpdate(model.byHandle(guid)!, change);
    }
    const added = await e.add('https://auth.example/new.xml');
    model.localAdd('https://auth.example/new.xml', undefined, added.guid);
    // The token expires while the second PATCH is on its way (its headers already carry the good one).
    let patches = 0;
    transport.before = ({ method }) => {
      if (method === 'PATCH' && ++patches === 2) void e.setAuth({ type: 'bearer', token: 'expired' });
    };
    e.setOnline(true);
    await until(async () => (await e.status()).phase === 'auth-required', 5000, 'auth-required');
    expect((await e.status()).lastError).toMatchObject({ code: 'unauthorized', status: 401 });

    expect(await e.failed()).toEqual([]);
    // Two delivered, one refused with 401 and kept, the rest never sent.
    expect(requests(s, 'PATCH').map((r) => r.status)).toEqual([200, 200, 401]);
    // The plan puts the queued adds (one POST) before the PATCHes, so the add is delivered too.
    expect(requests(s, 'POST').map((r) => r.status)).toEqual([200]);
    expect(await e.pending()).toHaveLength(guids.length - 2);
    await expect(e.sync()).rejects.toMatchObject({ code: 'unauthorized' });
    // Paused means paused: no request goes out while waiting for credentials.
    const sent = transport.sent.length;
    await new Promise((r) => setTimeout(r, 250));
    expect(transport.sent.length).toBe(sent);

    transport.before = undefined;
    await e.setAuth({ type: 'bearer', token: 'fresh' });
    await settle(e);
    expect((await e.status()).phase).toBe('idle');
    await checkInvariants({ engine: e, server: s, model, transport });
  });

  it('a 401 between the pages of a pull: the cursor stays put, the pull resumes after setAuth and misses nothing', async () => {
    const s = await server({ seed: 14 });
    const e = engine(s, { pageSize: 3 });
    const model = new Model();
    for (const view of s.state()) model.fromServer(view);
    await e.sync();
    const cursor = (await e.status()).cursor;
    await new Promise((r) => setTimeout(r, 10));
    for (const view of s.state().slice(0, 9)) {
      s.foreign.patch(view.guid, { is_subscribed: !view.is_subscribed });
      model.foreignPatch(model.byHandle(view.guid)!, { is_subscribed: !view.is_subscribed });
    }
    // Page 1 passes; page 2 is refused as if the token had just been revoked.
    s.clearLog();
    let lists = 0;
    s.failNext(1, 401, { method: 'GET', path: '/subscriptions' });
    s.clearFaults();
    const e2 = engine(s, {
      pageSize: 3,
      dbName: e.dbName,
      fetch: (async (input: string | URL, init?: RequestInit) => {
        const url = new URL(String(input));
        if (url.pathname.endsWith('/subscriptions') && ++lists === 2) s.failNext(1, 401, { method: 'GET', path: '/subscriptions' });
        return fetch(url, init);
      }) as typeof fetch,
    });
    await e.close();
    await expect(e2.sync()).rejects.toMatchObject({ code: 'unauthorized', status: 401 });
    expect((await e2.status()).phase).toBe('auth-required');
    expect((await e2.status()).cursor).toBe(cursor);
    expect(await cursorViolations(e2.dbName, s)).toEqual([]);
    await e2.setAuth({ type: 'bearer', token: 'demo-token' });
    await until(async () => (await e2.status()).cursor !== cursor, 5000, 'the pull after setAuth');
    await settle(e2);
    await checkInvariants({ engine: e2, server: s, model });
  });

  it('403 is treated like 401: paused, nothing dropped, resumed by setAuth', async () => {
    const s = await server({ seed: 3 });
    const e = engine(s);
    const model = new Model();
    for (const view of s.state()) model.fromServer(view);
    await e.sync();
    s.failNext(1, 403, { method: 'POST' });
    const added = await e.add('https://forbidden.example/feed.xml');
    model.localAdd('https://forbidden.example/feed.xml', undefined, added.guid);
    await until(async () => (await e.status()).phase === 'auth-required', 5000, 'auth-required');
    expect(await e.pending()).toHaveLength(1);
    expect(await e.failed()).toEqual([]);
    await e.setAuth({ type: 'bearer', token: 'demo-token' });
    await settle(e);
    await checkInvariants({ engine: e, server: s, model });
  });
});
