// The gPodder reference server's opodsync dialect: /api/2 as opodsync 0.5.3 serves it (see
// test/support/opodsync-observed.md for what the real server answered).
import { describe, expect, it } from 'vitest';
import { GPODDER_EPOCH_MS, gpodderServerPerFile } from './server-fixture.ts';
import type { WireChanges, WireUploadResult } from '../server/gpodder/server.ts';

const ctx = gpodderServerPerFile({ dialect: 'opodsync', cors: false });
const T0 = GPODDER_EPOCH_MS / 1000;

const subs = (device = 'web') => `/api/2/subscriptions/alice/${device}.json`;
const pull = (since?: number | string, device = 'web') =>
  ctx.api<WireChanges>('GET', since === undefined ? subs(device) : `${subs(device)}?since=${since}`);
const push = (body: unknown, device = 'web') => ctx.api<WireUploadResult>('POST', subs(device), { body });

describe('GET subscriptions', () => {
  it('needs no registered device and answers update_urls too', async () => {
    const res = await pull(0, 'never-registered');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ add: [], remove: [], update_urls: [], timestamp: T0 });
  });

  it('since is inclusive: the changes of the second named come again', async () => {
    ctx.clock.ms += 3_000;
    await push({ add: ['https://a.example/feed'] });
    expect((await pull(T0 + 3)).body.add).toEqual(['https://a.example/feed']);
    expect((await pull(T0 + 4)).body.add).toEqual([]);
  });

  it('since missing or not a number counts as 0; a leading number is read as PHP does', async () => {
    ctx.clock.ms += 3_000;
    await push({ add: ['https://a.example/feed'] });
    for (const since of [undefined, 'abc', '', 'now']) expect((await pull(since)).body.add, String(since)).toEqual(['https://a.example/feed']);
    expect((await pull(`${T0 + 4}abc`)).body.add).toEqual([]);
    expect((await pull(`${T0 + 3}.9`)).body.add).toEqual(['https://a.example/feed']);
  });

  it('keeps one list per user: the device in the path is ignored', async () => {
    await push({ add: ['https://a.example/feed'] }, 'phone');
    expect((await pull(0, 'web')).body.add).toEqual(['https://a.example/feed']);
    expect(ctx.server.subscribed({ device: 'anything' })).toEqual(['https://a.example/feed']);
  });

  it('lists a removed URL under remove for ever, even one never subscribed', async () => {
    await push({ remove: ['https://never.example/feed'] });
    ctx.clock.ms += 60_000;
    expect((await pull(0)).body).toMatchObject({ add: [], remove: ['https://never.example/feed'] });
  });
});

describe('POST subscriptions', () => {
  it('stores URLs as sent, never rewrites (update_urls is always empty)', async () => {
    const res = await push({ add: ['http://Example.COM/x?', 'https://u:p@b.example/f'] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ timestamp: T0, update_urls: [] });
    expect(ctx.server.subscribed()).toEqual(['http://Example.COM/x?', 'https://u:p@b.example/f']);
  });

  it('refuses the whole request when one URL is not http(s)://host, storing nothing', async () => {
    for (const bad of [' https://space.example/feed', 'feed://a.example/rss', 'HTTPS://upper.example/', 'https:///nohost', 42]) {
      const res = await push({ add: ['https://good.example/feed', bad], remove: ['https://gone.example/feed'] });
      expect(res.status, String(bad)).toBe(400);
      expect(res.body).toEqual({ code: 400, message: `Invalid URL: ${String(bad)}` });
    }
    expect(ctx.server.state()).toEqual([]);
  });

  it('accepts a URL in both lists: remove wins', async () => {
    const res = await push({ add: ['https://both.example/feed'], remove: ['https://both.example/feed'] });
    expect(res.status).toBe(200);
    expect(ctx.server.state()).toEqual([{ url: 'https://both.example/feed', subscribed: false, changed: T0 }]);
  });

  it('re-stamps a URL sent again though its state does not change', async () => {
    await push({ add: ['https://a.example/feed'] });
    ctx.clock.ms += 10_000;
    await push({ add: ['https://a.example/feed'] });
    expect((await pull(T0 + 10)).body.add).toEqual(['https://a.example/feed']);
  });

  it('ignores lists that are not lists and bodies that are not objects; refuses broken JSON', async () => {
    expect((await push({ add: 'https://a.example/feed' })).status).toBe(200);
    expect((await push([1, 2])).status).toBe(200);
    expect(ctx.server.state()).toEqual([]);
    const broken = await ctx.api('POST', subs(), { raw: '' });
    expect(broken.status).toBe(400);
    expect(broken.body).toEqual({ code: 400, message: 'Malformed JSON: Syntax error' });
  });

  it('refuses a bad device id with 400 and other methods with 501', async () => {
    expect((await ctx.api('POST', '/api/2/subscriptions/alice/bad%20id.json', { body: {} })).status).toBe(400);
    expect((await ctx.api('GET', '/api/2/subscriptions/alice.json')).status).toBe(400);
    expect((await ctx.api('DELETE', subs())).status).toBe(501);
  });
});

describe('devices and answers', () => {
  it('registers a device with a {code, message} notice and ignores the user named in the path', async () => {
    const res = await ctx.api('POST', '/api/2/devices/current/web.json', { body: { caption: 'Web' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ code: 200, message: 'Device updated' });
    expect(ctx.server.devices()).toEqual([{ id: 'web', caption: 'Web', type: 'other', subscriptions: 0 }]);
  });

  it('writes pretty JSON with escaped slashes, and sends no CORS headers', async () => {
    await push({ add: ['https://a.example/feed'] });
    const res = await pull(0);
    expect(res.text).toContain('"https:\\/\\/a.example\\/feed"');
    expect(res.text).toContain('\n    "add": [');
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('answers a preflight 401 (it asks for credentials first), without CORS headers', async () => {
    const pre = await fetch(`${ctx.server.url}${subs()}`, { method: 'OPTIONS', headers: { 'Access-Control-Request-Method': 'POST' } });
    expect(pre.status).toBe(401);
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('has no sync-devices: an empty 200, as opodsync answers', async () => {
    const res = await ctx.api('GET', '/api/2/sync-devices/alice.json');
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
  });
});
