import { describe, expect, it } from 'vitest';
import { dump, engine, picture, server, spyFetch, uniqueDb } from './helpers.ts';

describe('security and validation', () => {
  it('never writes credentials to IndexedDB', async () => {
    const token = 'very-secret-token-1234';
    const s = await server({ seed: 5, token });
    const e = engine(s, { auth: { type: 'bearer', token } });
    await e.sync();
    await e.update(s.state()[0]!.guid, { isSubscribed: false });
    await e.sync();
    const stored = await dump(e.dbName);
    expect(stored.length).toBeGreaterThan(100);
    expect(stored).not.toContain(token);
  });

  it('sends basic and custom-header credentials as configured', async () => {
    const s = await server({ seed: 1 });
    const seen: (string | null)[] = [];
    const spy = spyFetch(async (url, init, real) => {
      const h = new Headers(init?.headers);
      seen.push(h.get('authorization') ?? h.get('x-api-key'));
      // The reference server wants a bearer token: swap it in after recording what the engine sent.
      h.set('authorization', 'Bearer demo-token');
      return real(url, { ...init, headers: h });
    });
    const basic = engine(s, { auth: { type: 'basic', username: 'ana', password: 'pässword' }, fetch: spy });
    await basic.sync();
    const header = engine(s, { auth: { type: 'header', name: 'X-Api-Key', value: 'k-1' }, fetch: spy });
    await header.sync();
    expect(seen).toContain(`Basic ${Buffer.from('ana:pässword').toString('base64')}`);
    expect(seen).toContain('k-1');
  });

  it('binds a database to one server and account', async () => {
    const one = await server({ seed: 2 });
    const two = await server({ seed: 3 });
    const dbName = uniqueDb('bound');
    const first = engine(one, { dbName, account: 'alice' });
    await first.sync();
    await first.close();
    const other = engine(two, { dbName });
    await expect(other.subscriptions()).rejects.toMatchObject({ code: 'account-mismatch' });
    await expect(other.sync()).rejects.toMatchObject({ code: 'account-mismatch' });
    await other.close();
    const bob = engine(one, { dbName, account: 'bob' });
    await expect(bob.subscriptions()).rejects.toMatchObject({ code: 'account-mismatch' });
    await bob.close();
    // clear() is the way out: wipe and rebind.
    const fresh = engine(two, { dbName });
    await fresh.clear();
    await fresh.sync();
    expect(await fresh.subscriptions()).toHaveLength(3);
  });

  it('after clear() the store belongs to no one: another server or account takes it, and is bound then', async () => {
    const one = await server({ seed: 2 });
    const two = await server({ seed: 3 });
    const dbName = uniqueDb('cleared');
    const alice = engine(one, { dbName, account: 'alice' });
    await alice.sync();
    // Sign-out: the data goes, and with it the claim on the database.
    await alice.clear();
    await alice.close();
    const other = engine(two, { dbName, account: 'bob' });
    await other.sync();
    expect(await other.subscriptions()).toHaveLength(3);
    await other.close();
    // The first use bound it again: now it is bob's on the second server.
    const back = engine(one, { dbName, account: 'alice' });
    await expect(back.subscriptions()).rejects.toMatchObject({ code: 'account-mismatch' });
    await back.close();
  });

  it('an engine that cleared the store loses it to whoever uses it first', async () => {
    const one = await server({ seed: 2 });
    const two = await server({ seed: 3 });
    const dbName = uniqueDb('cleared-open');
    const first = engine(one, { dbName });
    await first.sync();
    await first.clear();
    const second = engine(two, { dbName });
    await second.sync();
    expect(await second.subscriptions()).toHaveLength(3);
    // The store is the second server's now: the first engine is told so instead of mixing data into it.
    await expect(first.subscriptions()).rejects.toMatchObject({ code: 'account-mismatch' });
    await expect(first.add('https://feeds.example/late.xml')).rejects.toMatchObject({ code: 'account-mismatch' });
  });

  const hostile: [string, (body: Record<string, unknown>) => unknown][] = [
    ['wrong field types', (b) => ({ ...b, subscriptions: [{ feed_url: 'https://x.example/f', guid: 'g', is_subscribed: 'yes' }] })],
    ['a missing guid', (b) => ({ ...b, subscriptions: [{ feed_url: 'https://x.example/f', is_subscribed: true }] })],
    ['a broken timestamp', (b) => ({ ...b, subscriptions: [{ feed_url: 'https://x.example/f', guid: 'g', is_subscribed: true, deleted: 'yesterday' }] })],
    ['no subscriptions array', (b) => ({ ...b, subscriptions: null })],
    ['far more entries than asked', (b) => ({ ...b, subscriptions: Array.from({ length: 10_000 }, (_, i) => ({ feed_url: `https://x.example/${i}`, guid: `g${i}`, is_subscribed: true })) })],
    ['an HTML page', () => '<html><body>Bad gateway</body></html>'],
    ['truncated JSON', () => '{"total": 3, "page": 1, "subscr'],
  ];
  for (const [what, spoil] of hostile) {
    it(`a response with ${what} is refused (bad-response) and leaves store and cursor as they were`, async () => {
      const s = await server({ seed: 6 });
      const e0 = engine(s, { pageSize: 50 });
      await e0.sync();
      const before = { list: picture(await e0.subscriptions()), cursor: (await e0.status()).cursor };
      s.foreign.patch(s.state()[0]!.guid, { is_subscribed: false });
      await e0.close();
      const bad = spyFetch(async (url, init, real) => {
        const response = await real(url, init);
        if (!url.pathname.endsWith('/subscriptions')) return response;
        const spoiled = spoil((await response.json()) as Record<string, unknown>);
        return new Response(typeof spoiled === 'string' ? spoiled : JSON.stringify(spoiled), { status: 200 });
      });
      const e = engine(s, { pageSize: 50, fetch: bad, dbName: e0.dbName });
      const error = await e.sync().then(() => undefined, (err: unknown) => err);
      expect(error).toMatchObject({ name: 'SyncError', code: 'bad-response' });
      expect(picture(await e.subscriptions())).toEqual(before.list);
      expect((await e.status()).cursor).toBe(before.cursor);
      expect((await e.status()).lastError?.code).toBe('bad-response');
    });
  }

  it('accepts timestamps with offsets, without milliseconds, and error codes as strings', async () => {
    const s = await server({ seed: 0 });
    s.errorCodeAsString(true);
    const odd = spyFetch(async (url, init, real) => {
      if (url.pathname.endsWith('/subscriptions') && (init?.method ?? 'GET') === 'GET') {
        return new Response(
          JSON.stringify({
            total: 2,
            page: 1,
            per_page: 50,
            subscriptions: [
              { feed_url: 'https://a.example/f', guid: 'a', is_subscribed: true, subscription_changed: '2026-01-02T03:04:05+02:00' },
              { feed_url: 'https://b.example/f', guid: 'b', is_subscribed: false, subscription_changed: '2026-01-02T01:04:06Z' },
            ],
          }),
          { status: 200 },
        );
      }
      return real(url, init);
    });
    const e = engine(s, { fetch: odd });
    await e.sync();
    expect(await e.subscriptions()).toHaveLength(2);
    // The newest entry is b (01:04:06Z is after 03:04:05+02:00 = 01:04:05Z): the cursor is server time, in UTC.
    expect((await e.status()).cursor).toBe('2026-01-02T01:04:06.000Z');
    await expect(e.deletion(42)).rejects.toMatchObject({ code: 'not-found', status: 404 });
  });
});
