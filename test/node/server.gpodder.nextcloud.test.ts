// The Nextcloud gPodder Sync paths: as the Nextcloud app serves them (default), and as opodsync does.
import { describe, expect, it } from 'vitest';
import { GPODDER_EPOCH_MS, gpodderServerPerFile } from './server-fixture.ts';
import { basic } from '../server/gpodder/client.ts';
import type { WireChanges, WireUploadResult } from '../server/gpodder/server.ts';

const T0 = GPODDER_EPOCH_MS / 1000;
const LIST = '/index.php/apps/gpoddersync/subscriptions';
const CREATE = '/index.php/apps/gpoddersync/subscription_change/create';

describe('the Nextcloud app (default dialect)', () => {
  const ctx = gpodderServerPerFile();
  const pull = (query = '') => ctx.api<WireChanges>('GET', `${LIST}${query}`);
  const push = (body: unknown) => ctx.api<WireUploadResult>('POST', CREATE, { body });

  it('uploads answer {timestamp} alone, in seconds; pulls {add, remove, timestamp}', async () => {
    const res = await push({ add: ['https://a.example/feed'], remove: ['https://b.example/feed'] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ timestamp: T0 });
    ctx.clock.ms += 1_000;
    expect((await pull('?since=0')).body).toEqual({ add: ['https://a.example/feed'], remove: ['https://b.example/feed'], timestamp: T0 + 1 });
  });

  it('since is exclusive, and without it the last week is answered', async () => {
    await push({ add: ['https://old.example/feed'] });
    ctx.clock.ms += 8 * 24 * 3600 * 1000;
    await push({ add: ['https://new.example/feed'] });
    expect((await pull()).body.add).toEqual(['https://new.example/feed']);
    const now = T0 + 8 * 24 * 3600;
    expect((await pull(`?since=${now - 1}`)).body.add).toEqual(['https://new.example/feed']);
    expect((await pull(`?since=${now}`)).body.add).toEqual([]);
  });

  it('stores URLs as sent, removes last, re-stamps repeats, needs no device', async () => {
    await push({ add: [' Feed://odd', 'https://both.example/'], remove: ['https://both.example/'] });
    expect(ctx.server.state()).toEqual([
      { url: ' Feed://odd', subscribed: true, changed: T0 },
      { url: 'https://both.example/', subscribed: false, changed: T0 },
    ]);
    ctx.clock.ms += 5_000;
    await push({ add: [' Feed://odd'] });
    expect((await pull(`?since=${T0 + 4}`)).body.add).toEqual([' Feed://odd']);
  });

  it('keeps its list apart from the /api/2 device lists', async () => {
    await ctx.api('POST', '/api/2/subscriptions/alice/web.json', { body: { add: ['https://device.example/feed'] } });
    expect((await pull('?since=0')).body.add).toEqual([]);
  });

  it('refuses what it cannot read, other methods and other paths', async () => {
    expect((await push({ add: 'https://a.example/' })).status).toBe(400);
    expect((await ctx.api('POST', CREATE, { raw: '{' })).status).toBe(400);
    expect((await ctx.api('POST', LIST, { body: { add: [] } })).status).toBe(405);
    expect((await ctx.api('GET', CREATE)).status).toBe(405);
    const other = await ctx.api('GET', '/index.php/apps/gpoddersync/settings');
    expect(other.status).toBe(404);
    expect(ctx.server.state()).toEqual([]);
  });

  it('takes HTTP Basic only (401 with a JSON message otherwise), never a session cookie', async () => {
    const none = await ctx.api('GET', LIST, { auth: null });
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ message: 'Current user is not logged in' });
    expect((await ctx.api('GET', LIST, { auth: { user: 'alice', password: 'nope' } })).status).toBe(401);
    const login = await ctx.api('POST', '/api/2/auth/alice/login.json');
    const cookie = login.headers.get('set-cookie')!.split(';')[0];
    expect((await ctx.api('GET', LIST, { auth: null, headers: { Cookie: cookie } })).status).toBe(401);
  });
});

describe('opodsync serving the Nextcloud paths', () => {
  const ctx = gpodderServerPerFile({ dialect: 'opodsync' });

  it('shares the one list with /api/2, answers update_urls, and since is inclusive', async () => {
    await ctx.api('POST', '/api/2/subscriptions/alice/web.json', { body: { add: ['https://device.example/feed'] } });
    const create = await ctx.api<WireUploadResult>('POST', CREATE, { body: { add: ['https://nc.example/feed'] } });
    expect(create.body).toEqual({ timestamp: T0, update_urls: [] });
    const res = await ctx.api<WireChanges>('GET', `${LIST}?since=${T0}`);
    expect(res.body).toEqual({ add: ['https://device.example/feed', 'https://nc.example/feed'], remove: [], update_urls: [], timestamp: T0 });
  });

  it('serves GET and POST on either path (both lead to one handler)', async () => {
    expect((await ctx.api('POST', LIST, { body: { add: ['https://a.example/feed'] } })).status).toBe(200);
    expect((await ctx.api<WireChanges>('GET', `${CREATE}?since=0`)).body.add).toEqual(['https://a.example/feed']);
  });

  it('refuses a bad URL with 400, storing nothing; other paths 404 after auth', async () => {
    const res = await ctx.api('POST', CREATE, { body: { add: ['https://ok.example/', 'ftp://no.example/'] } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, message: 'Invalid URL: ftp://no.example/' });
    expect(ctx.server.state()).toEqual([]);
    expect((await ctx.api('GET', '/index.php/apps/gpoddersync/nothing', { auth: null })).status).toBe(401);
    expect((await ctx.api('GET', '/index.php/apps/gpoddersync/nothing')).body).toEqual({ code: 404, message: 'Undefined Nextcloud API endpoint' });
  });

  it('words its 401s as opodsync does', async () => {
    const none = await fetch(`${ctx.server.url}${LIST}`);
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual({ code: 401, message: 'No username or password provided' });
    expect(none.headers.get('www-authenticate')).toBe('Basic realm="Please login"');
    const stranger = await fetch(`${ctx.server.url}${LIST}`, { headers: { Authorization: basic('bob', 'x') } });
    expect(await stranger.json()).toEqual({ code: 401, message: 'Invalid username' });
  });
});
