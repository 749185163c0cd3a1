// The gPodder reference server's default dialect, as gpodder.net (mygpo) serves /api/2.
import { describe, expect, it } from 'vitest';
import { GPODDER_EPOCH_MS, gpodderServerPerFile } from './server-fixture.ts';
import type { WireChanges, WireDevice, WireSyncStatus, WireUploadResult } from '../server/gpodder/server.ts';

const ctx = gpodderServerPerFile();
const T0 = GPODDER_EPOCH_MS / 1000;

const subs = (device = 'web') => `/api/2/subscriptions/alice/${device}.json`;
const register = (device = 'web') => ctx.api('POST', `/api/2/devices/alice/${device}.json`, { body: { caption: device, type: 'desktop' } });
const pull = (since: number | string, device = 'web') => ctx.api<WireChanges>('GET', `${subs(device)}?since=${since}`);
const push = (body: unknown, device = 'web') => ctx.api<WireUploadResult>('POST', subs(device), { body });

describe('devices', () => {
  it('a pull for a device never registered is a 404; after registration it answers', async () => {
    expect((await pull(0)).status).toBe(404);
    const reg = await register();
    expect(reg.status).toBe(200);
    expect(reg.text).toBe('');
    const res = await pull(0);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ add: [], remove: [], timestamp: T0 });
  });

  it('registration updates caption and type, lists devices, and refuses a bad id or type', async () => {
    await register();
    await ctx.api('POST', '/api/2/devices/alice/web.json', { body: { caption: 'Web player' } });
    const list = await ctx.api<WireDevice[]>('GET', '/api/2/devices/alice.json');
    expect(list.body).toEqual([{ id: 'web', caption: 'Web player', type: 'desktop', subscriptions: 0 }]);
    expect((await ctx.api('POST', '/api/2/devices/alice/bad%20id.json', { body: {} })).status).toBe(400);
    expect((await ctx.api('POST', '/api/2/devices/alice/web.json', { body: { type: 'toaster' } })).status).toBe(400);
    expect((await ctx.api('POST', '/api/2/devices/alice/web.json', { raw: '{"caption":' })).status).toBe(400);
  });

  it('an upload to an unknown device creates it', async () => {
    expect((await push({ add: ['https://a.example/feed'] }, 'phone')).status).toBe(200);
    expect(ctx.server.devices().map((d) => d.id)).toEqual(['phone']);
    expect((await pull(0, 'phone')).body.add).toEqual(['https://a.example/feed']);
  });
});

describe('GET subscriptions: since', () => {
  it('is required, a whole number and not negative (400 with a plain-text reason)', async () => {
    await register();
    const missing = await ctx.api('GET', subs());
    expect(missing.status).toBe(400);
    expect(missing.text).toBe("parameter 'since' missing");
    expect(missing.headers.get('content-type')).toMatch(/^text\/html/);
    for (const bad of ['abc', '1.5', '', '-3']) expect((await pull(bad)).status, bad).toBe(400);
  });

  it('is exclusive and in seconds; timestamp is the server clock in seconds', async () => {
    await register();
    ctx.clock.ms += 5_000; // T0 + 5 s
    await push({ add: ['https://a.example/feed'] });
    const after = await pull(T0 + 4);
    expect(after.body).toEqual({ add: ['https://a.example/feed'], remove: [], timestamp: T0 + 5 });
    expect((await pull(T0 + 5)).body.add).toEqual([]);
  });

  it('re-delivers a change made later in the second a pull answered for (timestamp is truncated)', async () => {
    await register();
    ctx.clock.ms += 200;
    const first = await pull(0);
    ctx.clock.ms += 300; // same second, after the pull
    await push({ add: ['https://late.example/feed'] });
    expect(first.body.timestamp).toBe(T0);
    expect((await pull(first.body.timestamp)).body.add).toEqual(['https://late.example/feed']);
  });

  it('answers the net effect over the window: added then removed inside it is nothing', async () => {
    await register();
    await push({ add: ['https://a.example/feed', 'https://b.example/feed'] });
    ctx.clock.ms += 1_000;
    await push({ remove: ['https://a.example/feed'] });
    expect((await pull(0)).body).toMatchObject({ add: ['https://b.example/feed'], remove: [] });
    expect((await pull(T0)).body).toMatchObject({ add: [], remove: ['https://a.example/feed'] });
  });

  it("echoes a device's own uploads back to it", async () => {
    await register();
    const res = await push({ add: ['https://a.example/feed'], remove: ['https://never.example/feed'] });
    expect(res.body).toEqual({ timestamp: T0, update_urls: [] });
    // Removing what was never subscribed changes nothing, so nothing is reported for it.
    expect((await pull(T0 - 1)).body).toMatchObject({ add: ['https://a.example/feed'], remove: [] });
  });
});

describe('POST subscriptions', () => {
  it('refuses a URL in both lists with 400 and stores nothing', async () => {
    await register();
    const res = await push({ add: ['https://a.example/feed', 'https://b.example/feed'], remove: ['https://b.example/feed'] });
    expect(res.status).toBe(400);
    expect(res.text).toBe("can not add and remove '['https://b.example/feed']' at the same time");
    expect(ctx.server.state({ device: 'web' })).toEqual([]);
  });

  it('sanitises URLs and reports each rewrite in update_urls, in request order', async () => {
    await register();
    const res = await push({
      add: [' https://a.example/feed ', 'http://Example.COM/Feed', 'feed://b.example/rss', 'itpc://c.example/rss', 'https://d.example/x?', 'https://u:secret@e.example/f'],
      remove: ['ITPC://F.example/old'],
    });
    expect(res.status).toBe(200);
    expect(res.body.update_urls).toEqual([
      [' https://a.example/feed ', 'https://a.example/feed'],
      ['http://Example.COM/Feed', 'http://example.com/Feed'],
      ['feed://b.example/rss', 'http://b.example/rss'],
      ['itpc://c.example/rss', 'http://c.example/rss'],
      ['https://d.example/x?', 'https://d.example/x'],
      ['https://u:secret@e.example/f', 'https://e.example/f'],
      ['ITPC://F.example/old', 'http://f.example/old'],
    ]);
    expect(ctx.server.subscribed({ device: 'web' })).toEqual([
      'https://a.example/feed',
      'http://example.com/Feed',
      'http://b.example/rss',
      'http://c.example/rss',
      'https://d.example/x',
      'https://e.example/f',
    ]);
  });

  it('reports a refused URL as rewritten to "" and ignores it, storing the rest', async () => {
    await register();
    const res = await push({ add: ['gopher://a.example/feed', 'short', 'https://ok.example/feed'] });
    expect(res.status).toBe(200);
    expect(res.body.update_urls).toEqual([
      ['gopher://a.example/feed', ''],
      ['short', ''],
    ]);
    expect(ctx.server.subscribed({ device: 'web' })).toEqual(['https://ok.example/feed']);
  });

  it('drops a remove whose sanitised URL is also added, and drops empty strings unreported', async () => {
    await register();
    const res = await push({ add: ['https://a.example/feed', ''], remove: ['https://A.example/feed'] });
    expect(res.body.update_urls).toEqual([['https://A.example/feed', 'https://a.example/feed']]);
    expect(ctx.server.subscribed({ device: 'web' })).toEqual(['https://a.example/feed']);
  });

  it('refuses bodies that are empty, not JSON, or not lists of URLs, changing nothing', async () => {
    await register();
    expect((await ctx.api('POST', subs(), { raw: '' })).status).toBe(400);
    expect((await ctx.api('POST', subs(), { raw: '{"add": [' })).status).toBe(400);
    expect((await push({ add: 'https://a.example/feed' })).status).toBe(400);
    expect((await push({ add: [42] })).status).toBe(400);
    expect((await push([])).status).toBe(400);
    expect(ctx.server.state({ device: 'web' })).toEqual([]);
  });

  it('answers 405 to other methods and 404 to paths it does not serve', async () => {
    expect((await ctx.api('DELETE', subs())).status).toBe(405);
    expect((await ctx.api('GET', '/api/2/subscriptions/alice/web.opml?since=0')).status).toBe(404);
    expect((await ctx.api('GET', '/api/2/settings/alice/account.json')).status).toBe(404);
    expect((await ctx.api('GET', '/api/2/subscriptions/alice/bad%20id.json?since=0')).status).toBe(404);
  });
});

describe('per-device lists and sync groups', () => {
  it("keeps each device's subscriptions apart", async () => {
    await register('web');
    await register('phone');
    await push({ add: ['https://phone.example/feed'] }, 'phone');
    expect((await pull(0, 'web')).body.add).toEqual([]);
    ctx.server.foreign.add(['https://other.example/feed'], { device: 'tablet' });
    expect((await pull(0, 'web')).body.add).toEqual([]);
    expect(ctx.server.subscribed({ device: 'tablet' })).toEqual(['https://other.example/feed']);
  });

  it('grouping merges subscriptions and from then on a write on one reaches all', async () => {
    await register('web');
    await register('phone');
    await push({ add: ['https://phone.example/feed'] }, 'phone');
    ctx.clock.ms += 2_000;
    const res = await ctx.api<WireSyncStatus>('POST', '/api/2/sync-devices/alice.json', { body: { synchronize: [['web', 'phone']] } });
    expect(res.body).toEqual({ synchronized: [['web', 'phone']], 'not-synchronized': [] });
    expect((await pull(T0 + 1, 'web')).body.add).toEqual(['https://phone.example/feed']);
    await push({ add: ['https://web.example/feed'] }, 'web');
    expect((await pull(T0 + 1, 'phone')).body.add).toEqual(['https://web.example/feed']);

    const stop = await ctx.api<WireSyncStatus>('POST', '/api/2/sync-devices/alice.json', { body: { 'stop-synchronize': ['phone'] } });
    expect(stop.body).toEqual({ synchronized: [], 'not-synchronized': ['web', 'phone'] });
    await push({ add: ['https://alone.example/feed'] }, 'web');
    expect(ctx.server.subscribed({ device: 'phone' })).not.toContain('https://alone.example/feed');
  });

  it('refuses to group a device it does not know', async () => {
    await register('web');
    const res = await ctx.api('POST', '/api/2/sync-devices/alice.json', { body: { synchronize: [['web', 'ghost']] } });
    expect(res.status).toBe(404);
    expect((await ctx.api<WireSyncStatus>('GET', '/api/2/sync-devices/alice.json')).body).toEqual({ synchronized: [], 'not-synchronized': ['web'] });
  });

  it('an account-wide change (the website) reaches every device there is', async () => {
    await register('web');
    await register('phone');
    ctx.server.foreign.add(['https://site.example/feed']);
    expect((await pull(0, 'web')).body.add).toEqual(['https://site.example/feed']);
    expect((await pull(0, 'phone')).body.add).toEqual(['https://site.example/feed']);
  });
});

describe('answers', () => {
  it('are JSON with CORS headers, and a preflight is answered without credentials', async () => {
    await register();
    const res = await pull(0);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const pre = await fetch(`${ctx.server.url}${subs()}`, { method: 'OPTIONS', headers: { 'Access-Control-Request-Method': 'POST' } });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
  });
});
