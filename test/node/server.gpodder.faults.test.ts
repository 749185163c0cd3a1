// The gPodder server's shared controls: faults, latency on injected timers, the log, the admin surface.
import { afterEach, describe, expect, it } from 'vitest';
import { GPODDER_EPOCH_MS, gpodderServerPerFile } from './server-fixture.ts';
import { startGpodderServer, type GpodderServer, type WireChanges } from '../server/gpodder/server.ts';
import { createGpodderApi } from '../server/gpodder/client.ts';
import { wallTime } from '../server/listen.ts';

const ctx = gpodderServerPerFile();
const PULL = '/api/2/subscriptions/alice/web.json?since=0';
const PUSH = '/api/2/subscriptions/alice/web.json';
const admin = (method: string, path: string, body?: unknown) =>
  fetch(`${ctx.server.url}/__admin${path}`, { method, body: body === undefined ? undefined : JSON.stringify(body) }).then(async (r) => ({
    status: r.status,
    body: (await r.json()) as unknown,
  }));

describe('faults', () => {
  it('failNext matches method and full path, sends Retry-After, then serves normally', async () => {
    ctx.server.registerDevice('web');
    ctx.server.failNext(1, 503, { method: 'GET', path: /^\/api\/2\/subscriptions\// }, { retryAfter: 4 });
    expect((await ctx.api('POST', '/api/2/devices/alice/web.json', { body: {} })).status).toBe(200);
    const failed = await ctx.api('GET', PULL);
    expect(failed.status).toBe(503);
    expect(failed.headers.get('retry-after')).toBe('4');
    expect((await ctx.api('GET', PULL)).status).toBe(200);
    expect(ctx.server.log().map((e) => [e.status, e.fault])).toEqual([[200, undefined], [503, 'fail'], [200, undefined]]);
  });

  it('comes before auth, so even an unauthenticated request sees it', async () => {
    ctx.server.failNext(1, 429, { path: PUSH });
    expect((await ctx.api('POST', PUSH, { auth: null, body: {} })).status).toBe(429);
  });

  it('by default stops the upload before it is stored; afterHandling stores it and loses the answer', async () => {
    ctx.server.failNext(1, 502, { method: 'POST' });
    expect((await ctx.api('POST', PUSH, { body: { add: ['https://a.example/feed'] } })).status).toBe(502);
    expect(ctx.server.devices()).toEqual([]);
    ctx.server.dropNext(1, { method: 'POST' }, { afterHandling: true });
    await expect(ctx.api('POST', PUSH, { body: { add: ['https://a.example/feed'] } })).rejects.toThrow();
    expect(ctx.server.subscribed({ device: 'web' })).toEqual(['https://a.example/feed']);
  });

  it('malformNext with afterHandling sends the first half of the real answer', async () => {
    ctx.server.foreign.add(['https://a.example/feed'], { device: 'web' });
    const real = (await ctx.api('GET', PULL)).text;
    ctx.server.malformNext(1, { method: 'GET' }, undefined, { afterHandling: true });
    const res = await ctx.api('GET', PULL);
    expect(res.status).toBe(200);
    expect(res.text).toBe(real.slice(0, Math.ceil(real.length / 2)));
  });

  it('covers the Nextcloud paths too, and clearFaults forgets the queue', async () => {
    ctx.server.failNext(2, 500, { path: /gpoddersync/ });
    expect((await ctx.api('GET', '/index.php/apps/gpoddersync/subscriptions?since=0')).status).toBe(500);
    ctx.server.clearFaults();
    expect((await ctx.api('GET', '/index.php/apps/gpoddersync/subscriptions?since=0')).status).toBe(200);
  });
});

describe('admin surface', () => {
  it('drives data, devices, faults and the log over HTTP without credentials', async () => {
    expect((await admin('POST', '/register', { device: 'web', caption: 'Web' })).status).toBe(200);
    expect((await admin('POST', '/foreign', { add: ['https://a.example/feed'], device: 'web' })).body).toEqual({
      timestamp: GPODDER_EPOCH_MS / 1000,
      update_urls: [],
    });
    expect((await admin('POST', '/seed', { n: 3, device: 'web' })).body).toMatchObject({ urls: expect.any(Array) });
    expect(((await admin('POST', '/state', { device: 'web' })).body as unknown[]).length).toBe(4);
    expect((await admin('GET', '/devices')).body).toEqual([{ id: 'web', caption: 'Web', type: 'other', subscriptions: 4 }]);
    await admin('POST', '/fail', { status: 503, count: 1 });
    expect((await ctx.api('GET', PULL)).status).toBe(503);
    expect(((await admin('GET', '/log')).body as unknown[]).length).toBe(1);
    expect((await admin('GET', '/timestamp')).body).toEqual({ timestamp: GPODDER_EPOCH_MS / 1000 });
    await admin('POST', '/reset');
    expect((await admin('GET', '/devices')).body).toEqual([]);
  });

  it('answers a refused foreign change with its HTTP status, and bad input with 400', async () => {
    expect((await admin('POST', '/foreign', { add: ['https://a.example/'], remove: ['https://a.example/'], device: 'web' })).status).toBe(400);
    expect((await admin('POST', '/seed', { n: 'many' })).status).toBe(400);
    expect((await admin('POST', '/state', { device: 'ghost' })).status).toBe(404);
    expect((await admin('GET', '/nothing')).status).toBe(404);
  });
});

describe('seed and reset', () => {
  it('seeds realistic feeds that survive sanitising, the same ones after every reset', async () => {
    const first = ctx.server.seed(50, { device: 'web' });
    const pulled = await ctx.api<WireChanges>('GET', PULL);
    expect(pulled.body.add).toEqual(first);
    expect(first.every((u) => /^https?:\/\/[^/]+\//.test(u))).toBe(true);
    ctx.server.reset();
    expect(ctx.server.seed(50, { device: 'web' })).toEqual(first);
  });
});

describe('injected time', () => {
  let server: GpodderServer | undefined;
  afterEach(() => server?.close());

  it('latency waits on the given timers, not the wall clock', async () => {
    const timers: { fn: () => void; ms: number }[] = [];
    server = await startGpodderServer({
      latencyMs: 250,
      time: { now: () => GPODDER_EPOCH_MS, setTimeout: (fn, ms) => timers.push({ fn, ms }), clearTimeout: () => undefined },
    });
    const api = createGpodderApi(server.url);
    let answered = false;
    const pending = api('POST', '/api/2/devices/alice/web.json', { body: {} }).then((r) => {
      answered = true;
      return r;
    });
    while (timers.length === 0) await new Promise((r) => setImmediate(r));
    expect(timers.map((t) => t.ms)).toEqual([250]);
    expect(answered).toBe(false);
    timers[0].fn();
    expect((await pending).status).toBe(200);
  });

  it('stamps timestamps from now(), in seconds, truncated', async () => {
    let ms = 1_234_567_890_999;
    server = await startGpodderServer({ time: { ...wallTime, now: () => ms } });
    const api = createGpodderApi(server.url);
    const res = await api<{ timestamp: number }>('POST', '/api/2/subscriptions/alice/web.json', { body: { add: ['https://a.example/'] } });
    expect(res.body.timestamp).toBe(1_234_567_890);
    ms += 1;
    expect(server.timestamp()).toBe(1_234_567_891);
    expect(server.state({ device: 'web' })).toEqual([{ url: 'https://a.example/', subscribed: true, changed: 1_234_567_890 }]);
  });
});
