import { describe, expect, it } from 'vitest';
import { serverPerFile } from './server-fixture.ts';
import { type WireSubscriptionPage } from '../server/server.ts';

const ctx = serverPerFile();

const auth = { Authorization: 'Bearer demo-token' };

describe('failNext', () => {
  it('fails only matching requests, the given number of times, with Retry-After exposed', async () => {
    ctx.server.failNext(2, 503, { method: 'GET', path: '/subscriptions' }, { retryAfter: 7 });
    expect((await ctx.api('POST', '/subscriptions', { body: { subscriptions: [] } })).status).toBe(200);
    expect((await ctx.api('GET', '/deletions/1')).status).toBe(404);
    for (let i = 0; i < 2; i++) {
      const res = await ctx.api('GET', '/subscriptions');
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('7');
      expect(res.headers.get('access-control-expose-headers')).toBe('Retry-After');
      expect(res.body).toEqual({ code: 503, message: 'Service Unavailable' });
    }
    expect((await ctx.api('GET', '/subscriptions')).status).toBe(200);
  });

  it('happens before auth, so even an unauthorized request sees it', async () => {
    ctx.server.failNext(1, 429, undefined, { retryAfter: 'Wed, 21 Oct 2015 07:28:00 GMT' });
    const res = await ctx.api('GET', '/subscriptions', { token: null });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('Wed, 21 Oct 2015 07:28:00 GMT');
  });

  it('sends a raw body of the given type, like a proxy page', async () => {
    ctx.server.failNext(1, 502, undefined, { body: '<html>Bad Gateway</html>', contentType: 'text/html' });
    const res = await ctx.api('GET', '/subscriptions');
    expect(res.status).toBe(502);
    expect(res.text).toBe('<html>Bad Gateway</html>');
    expect(res.headers.get('content-type')).toBe('text/html');
  });

  it('matches a RegExp path below /v1 and also the full path', async () => {
    ctx.server.foreign.add('https://a.example/feed.xml', 'ga');
    ctx.server.failNext(1, 500, { path: /^\/subscriptions\/.+/ });
    ctx.server.failNext(1, 504, { path: '/v1/deletions/1' });
    expect((await ctx.api('GET', '/subscriptions')).status).toBe(200);
    expect((await ctx.api('GET', '/subscriptions/ga')).status).toBe(500);
    expect((await ctx.api('GET', '/subscriptions/ga')).status).toBe(200);
    expect((await ctx.api('GET', '/deletions/1')).status).toBe(504);
  });

  it('by default stops the request before it reaches the handler', async () => {
    ctx.server.foreign.add('https://a.example/feed.xml', 'ga');
    ctx.server.failNext(1, 500, { method: 'PATCH' });
    ctx.server.dropNext(1, { method: 'POST' });
    ctx.server.malformNext(1, { method: 'DELETE' });
    expect((await ctx.api('PATCH', '/subscriptions/ga', { body: { is_subscribed: false } })).status).toBe(500);
    await ctx.api('POST', '/subscriptions', { body: { subscriptions: [{ feed_url: 'https://b.example/feed.xml' }] } }).catch(() => undefined);
    expect((await ctx.api('DELETE', '/subscriptions/ga')).status).toBe(200);
    expect(ctx.server.state().map((s) => [s.guid, s.is_subscribed])).toEqual([['ga', true]]);
    expect(ctx.server.log().map((e) => e.fault)).toEqual(['fail', 'drop', 'malform']);
  });

  it('with afterHandling, applies the request and then answers the failure', async () => {
    ctx.server.foreign.add('https://a.example/feed.xml', 'ga');
    ctx.server.failNext(1, 500, { method: 'PATCH' }, { afterHandling: true });
    const res = await ctx.api('PATCH', '/subscriptions/ga', { body: { is_subscribed: false } });
    expect(res.status).toBe(500);
    expect(ctx.server.entry('ga')?.is_subscribed).toBe(false);
  });

  it('never touches preflights or admin requests, and clearFaults forgets the queue', async () => {
    ctx.server.failNext(5, 500);
    const pre = await fetch(`${ctx.server.url}/subscriptions`, { method: 'OPTIONS', headers: { 'Access-Control-Request-Method': 'GET' } });
    expect(pre.status).toBe(204);
    expect((await fetch(`${ctx.server.origin}/__admin/state`)).status).toBe(200);
    expect((await ctx.api('GET', '/subscriptions')).status).toBe(500);
    ctx.server.clearFaults();
    expect((await ctx.api('GET', '/subscriptions')).status).toBe(200);
  });
});

describe('dropNext', () => {
  it('cuts the response mid-body so reading it rejects, then serves normally', async () => {
    ctx.server.seed(3);
    ctx.server.dropNext(1, { path: '/subscriptions' });
    await expect(fetch(`${ctx.server.url}/subscriptions`, { headers: auth }).then((r) => r.text())).rejects.toThrow();
    expect((await ctx.api('GET', '/subscriptions')).status).toBe(200);
    expect(ctx.server.log().map((e) => e.fault)).toEqual(['drop', undefined]);
  });

  it('with afterHandling, the change is made though the answer is lost', async () => {
    ctx.server.dropNext(1, { method: 'POST' }, { afterHandling: true });
    const body = JSON.stringify({ subscriptions: [{ feed_url: 'https://lost.example/feed.xml' }] });
    await expect(
      fetch(`${ctx.server.url}/subscriptions`, { method: 'POST', headers: auth, body }).then((r) => r.json()),
    ).rejects.toThrow();
    expect(ctx.server.state().map((s) => s.feed_url)).toEqual(['https://lost.example/feed.xml']);
  });
});

describe('malformNext', () => {
  it('answers 200 with truncated JSON by default, or the given body', async () => {
    ctx.server.malformNext(1);
    const broken = await ctx.api('GET', '/subscriptions');
    expect(broken.status).toBe(200);
    expect(broken.headers.get('content-type')).toMatch(/application\/json/);
    expect(() => JSON.parse(broken.text)).toThrow();

    ctx.server.malformNext(1, { method: 'GET' }, '{"total": "many"}');
    const custom = await ctx.api('GET', '/subscriptions');
    expect(custom.text).toBe('{"total": "many"}');
    expect((await ctx.api('GET', '/subscriptions')).body).toMatchObject({ total: 0 });
  });

  it('with afterHandling, sends the first half of the real answer', async () => {
    ctx.server.seed(4);
    const real = (await ctx.api('GET', '/subscriptions')).text;
    ctx.server.malformNext(1, undefined, undefined, { afterHandling: true });
    const res = await ctx.api('GET', '/subscriptions');
    expect(res.text).toBe(real.slice(0, Math.ceil(real.length / 2)));
  });
});

describe('latency and reorder', () => {
  it('delays answers by the latency, and not once it is set back to 0', async () => {
    ctx.server.setLatency(150);
    let t = performance.now();
    expect((await ctx.api('GET', '/subscriptions')).status).toBe(200);
    expect(performance.now() - t).toBeGreaterThanOrEqual(140);
    ctx.server.setLatency(0);
    t = performance.now();
    await ctx.api('GET', '/subscriptions');
    expect(performance.now() - t).toBeLessThan(140);
  });

  it('applies faults after the latency', async () => {
    ctx.server.setLatency(100);
    ctx.server.failNext(1, 503);
    const t = performance.now();
    expect((await ctx.api('GET', '/subscriptions')).status).toBe(503);
    expect(performance.now() - t).toBeGreaterThanOrEqual(90);
  });

  it('shuffles the next list requests only, keeping the same entries', async () => {
    const order = ctx.server.seed(60).map((s) => s.guid);
    ctx.server.reorder(2);
    const page = async () => (await ctx.api<WireSubscriptionPage>('GET', '/subscriptions?per_page=60')).body.subscriptions.map((s) => s.guid);
    const first = await page();
    const second = await page();
    const third = await page();
    expect(first).not.toEqual(order);
    expect(second).not.toEqual(order);
    expect(second).not.toEqual(first);
    expect([...first].sort()).toEqual([...order].sort());
    expect(third).toEqual(order);
  });

  it('shuffles afresh for each page, so a drain may repeat and miss entries as offset paging allows', async () => {
    const order = ctx.server.seed(40).map((s) => s.guid);
    ctx.server.reorder(2);
    const seen: string[] = [];
    for (const p of [1, 2]) {
      const res = await ctx.api<WireSubscriptionPage>('GET', `/subscriptions?per_page=20&page=${p}`);
      seen.push(...res.body.subscriptions.map((s) => s.guid));
    }
    expect(seen).toHaveLength(40);
    expect(new Set(seen).size).toBeLessThan(40);
    expect(seen.every((g) => order.includes(g))).toBe(true);
  });
});
