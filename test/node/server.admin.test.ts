import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApi, type ApiCall } from '../server/client.ts';
import { startServer, type RefServer, type ServerEntryView, type WireDeletionAccepted } from '../server/server.ts';

let server: RefServer;
let api: ApiCall;
let admin: ApiCall;
beforeAll(async () => {
  server = await startServer({ port: 0, deletionDelayMs: 5 });
  api = createApi(server.url);
  admin = createApi(`${server.origin}/__admin`, 'no-token-needed');
});
afterAll(() => server.close());
beforeEach(() => server.reset());

describe('admin route', () => {
  it('seeds, reports state and one entry, and resets, without a bearer token', async () => {
    const seeded = await admin('POST', '/seed', { token: null, body: { n: 4 } });
    expect(seeded.body).toEqual({ seeded: 4 });
    const state = await admin<ServerEntryView[]>('GET', '/state', { token: null });
    expect(state.body).toEqual(server.state());
    expect(state.body).toHaveLength(4);
    const one = await admin<ServerEntryView>('GET', `/entry/${state.body[2].guid}`);
    expect(one.body).toEqual(state.body[2]);
    expect((await admin('GET', '/entry/nobody')).status).toBe(404);
    expect((await admin('POST', '/reset')).status).toBe(200);
    expect(server.state()).toEqual([]);
  });

  it('drives the other device', async () => {
    const added = await admin<ServerEntryView>('POST', '/foreign', { body: { op: 'add', feed_url: 'https://a.example/feed.xml', guid: 'ga' } });
    expect(added.body).toMatchObject({ guid: 'ga', feed_url: 'https://a.example/feed.xml', is_subscribed: true });
    const patched = await admin('POST', '/foreign', { body: { op: 'patch', guid: 'ga', body: { is_subscribed: false } } });
    expect(patched.body).toEqual({ is_subscribed: false, subscription_changed: server.entry('ga')!.subscription_changed });
    const removed = await admin<ServerEntryView>('POST', '/foreign', { body: { op: 'remove', guid: 'ga' } });
    expect(removed.body.deleted).toEqual(expect.any(String));
    const again = await admin('POST', '/foreign', { body: { op: 'remove', guid: 'ga' } });
    expect(again.status).toBe(410);
    const invalid = await admin('POST', '/foreign', { body: { op: 'add', feed_url: 'example.com/rss' } });
    expect(invalid.status).toBe(405);
    expect(invalid.body).toEqual({ code: 405, message: 'No protocol present' });
  });

  it('queues fail, drop and malform faults for /v1 only', async () => {
    await admin('POST', '/fail', { body: { count: 1, status: 503, method: 'GET', path: '/subscriptions', retryAfter: 2 } });
    expect((await admin('GET', '/state')).status).toBe(200);
    const failed = await api('GET', '/subscriptions');
    expect(failed.status).toBe(503);
    expect(failed.headers.get('retry-after')).toBe('2');

    await admin('POST', '/drop', { body: { pathPattern: '^/deletions/' } });
    expect((await api('GET', '/subscriptions')).status).toBe(200);
    await expect(
      fetch(`${server.url}/deletions/1`, { headers: { Authorization: 'Bearer demo-token' } }).then((r) => r.text()),
    ).rejects.toThrow();

    await admin('POST', '/malform', { body: { body: '<<' } });
    expect((await api('GET', '/subscriptions')).text).toBe('<<');

    await admin('POST', '/fail', { body: { count: 3, status: 500 } });
    await admin('POST', '/clear-faults');
    expect((await api('GET', '/subscriptions')).status).toBe(200);
  });

  it('sets latency, reorder, deletion outcome and delay, and the error code style', async () => {
    await admin('POST', '/latency', { body: { ms: 120 } });
    const t = performance.now();
    await api('GET', '/subscriptions');
    expect(performance.now() - t).toBeGreaterThanOrEqual(110);
    await admin('POST', '/latency', { body: { ms: 0 } });

    const order = server.seed(30).map((s) => s.guid);
    await admin('POST', '/reorder', { body: { count: 1 } });
    const shuffled = await api<{ subscriptions: Array<{ guid: string }> }>('GET', '/subscriptions');
    expect(shuffled.body.subscriptions.map((s) => s.guid)).not.toEqual(order);

    await admin('POST', '/deletion-outcome', { body: { outcome: 'failure' } });
    await admin('POST', '/deletion-delay', { body: { ms: 0 } });
    const del = await api<WireDeletionAccepted>('DELETE', `/subscriptions/${order[0]}`);
    await new Promise((r) => setTimeout(r, 20));
    expect((await api<{ status: string }>('GET', `/deletions/${del.body.deletion_id}`)).body.status).toBe('FAILURE');

    await admin('POST', '/error-code-as-string', { body: { on: true } });
    expect((await api('GET', '/nowhere')).body).toEqual({ code: '404', message: 'Resource not found' });
  });

  it('serves and clears the log', async () => {
    await api('GET', '/subscriptions?page=1');
    const log = await admin<Array<{ path: string; query: Record<string, string> }>>('GET', '/log');
    expect(log.body.map((e) => [e.path, e.query])).toEqual([['/v1/subscriptions', { page: '1' }]]);
    await admin('DELETE', '/log');
    expect(server.log()).toEqual([]);
  });

  it('refuses bad input with 400 and unknown routes with 404, with CORS headers', async () => {
    for (const [path, body] of [
      ['/seed', { n: 'many' }],
      ['/fail', { status: 42 }],
      ['/deletion-outcome', { outcome: 'maybe' }],
      ['/foreign', { op: 'explode' }],
      ['/error-code-as-string', {}],
    ] as const) {
      const res = await admin('POST', path, { body });
      expect(res.status, path).toBe(400);
      expect(res.body).toMatchObject({ code: 400, message: expect.any(String) });
    }
    expect((await admin('POST', '/seed', { raw: '[1]' })).status).toBe(400);
    const unknown = await admin('GET', '/nothing');
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('access-control-allow-origin')).toBe('*');
    const pre = await fetch(`${server.origin}/__admin/seed`, { method: 'OPTIONS' });
    expect(pre.status).toBe(204);
  });
});
