import { describe, expect, it } from 'vitest';
import { serverPerFile } from './server-fixture.ts';

const ctx = serverPerFile();

describe('request log', () => {
  it('records method, path, query, status and parsed body, oldest first', async () => {
    const before = Date.now();
    await ctx.api('GET', '/subscriptions?page=2&per_page=5');
    await ctx.api('POST', '/subscriptions', { body: { subscriptions: [{ feed_url: 'https://a.example/feed.xml' }] } });
    await ctx.api('PATCH', '/subscriptions/x', { raw: 'not json' });
    const log = ctx.server.log();
    expect(log.map((e) => [e.method, e.path, e.status])).toEqual([
      ['GET', '/v1/subscriptions', 200],
      ['POST', '/v1/subscriptions', 200],
      ['PATCH', '/v1/subscriptions/x', 405],
    ]);
    expect(log[0].query).toEqual({ page: '2', per_page: '5' });
    expect(log[0].body).toBeUndefined();
    expect(log[1].body).toEqual({ subscriptions: [{ feed_url: 'https://a.example/feed.xml' }] });
    expect(log[2].body).toBe('not json');
    expect(log[0].at).toBeGreaterThanOrEqual(before);
    expect(log[0].at).toBeLessThanOrEqual(Date.now());
  });

  it('redacts credentials but records whether auth was present and valid', async () => {
    await ctx.api('GET', '/subscriptions');
    await ctx.api('GET', '/subscriptions', { token: 'stolen-token' });
    await ctx.api('GET', '/subscriptions', { token: null, headers: { 'X-Api-Key': 'k-123', 'X-Trace': 't-1' } });
    const [good, bad, none] = ctx.server.log();
    expect(good).toMatchObject({ authPresent: true, authorized: true, status: 200 });
    expect(good.headers.authorization).toBe('<redacted>');
    expect(bad).toMatchObject({ authPresent: true, authorized: false, status: 401 });
    expect(none).toMatchObject({ authPresent: false, authorized: false, status: 401 });
    expect(none.headers['x-api-key']).toBe('<redacted>');
    expect(none.headers['x-trace']).toBe('t-1');
    expect(JSON.stringify(ctx.server.log())).not.toMatch(/demo-token|stolen-token|k-123/);
  });

  it('records preflights and faults, but not admin requests', async () => {
    await fetch(`${ctx.server.url}/subscriptions`, { method: 'OPTIONS', headers: { 'Access-Control-Request-Method': 'GET' } });
    await fetch(`${ctx.server.origin}/__admin/state`);
    ctx.server.failNext(1, 503);
    await ctx.api('GET', '/subscriptions');
    expect(ctx.server.log().map((e) => [e.method, e.status, e.fault])).toEqual([
      ['OPTIONS', 204, undefined],
      ['GET', 503, 'fail'],
    ]);
  });

  it('clears on clearLog and on reset', async () => {
    await ctx.api('GET', '/subscriptions');
    ctx.server.clearLog();
    expect(ctx.server.log()).toEqual([]);
    await ctx.api('GET', '/subscriptions');
    ctx.server.reset();
    expect(ctx.server.log()).toEqual([]);
  });
});
