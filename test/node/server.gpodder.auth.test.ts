// Credentials on the gPodder server's /api/2 paths, in both dialects.
import { describe, expect, it } from 'vitest';
import { gpodderServerPerFile } from './server-fixture.ts';
import type { WireChanges } from '../server/gpodder/server.ts';

const PULL = '/api/2/subscriptions/alice/web.json?since=0';

describe('mygpo', () => {
  const ctx = gpodderServerPerFile({ users: { alice: 'alice-password', bob: 'bob-password' } });

  it('answers 401 with an empty body and a Basic challenge without, or with wrong, credentials', async () => {
    await ctx.api('POST', '/api/2/devices/alice/web.json', { body: {} });
    for (const auth of [null, { user: 'alice', password: 'wrong' }, { user: 'mallory', password: 'alice-password' }]) {
      const res = await ctx.api('GET', PULL, { auth });
      expect(res.status, JSON.stringify(auth)).toBe(401);
      expect(res.text).toBe('');
      expect(res.headers.get('www-authenticate')).toBe('Basic realm=""');
    }
    expect(ctx.server.log().map((e) => [e.status, e.authorized])).toEqual([[200, true], [401, false], [401, false], [401, false]]);
  });

  it('refuses a path naming another user than the credentials', async () => {
    const res = await ctx.api('POST', '/api/2/devices/bob/web.json', { body: {} });
    expect(res.status).toBe(401);
    expect(ctx.server.devices('bob')).toEqual([]);
  });

  it('keeps each user apart', async () => {
    const bob = { user: 'bob', password: 'bob-password' };
    await ctx.api('POST', '/api/2/subscriptions/bob/web.json', { auth: bob, body: { add: ['https://bob.example/feed'] } });
    expect(ctx.server.subscribed({ user: 'bob', device: 'web' })).toEqual(['https://bob.example/feed']);
    expect(ctx.server.devices('alice')).toEqual([]);
  });

  it('a login sets a sessionid cookie that then stands for Basic; logout ends it', async () => {
    await ctx.api('POST', '/api/2/devices/alice/web.json', { body: {} });
    expect((await ctx.api('POST', '/api/2/auth/alice/login.json', { auth: { user: 'alice', password: 'wrong' } })).status).toBe(401);
    const login = await ctx.api('POST', '/api/2/auth/alice/login.json');
    expect(login.status).toBe(200);
    const cookie = login.headers.get('set-cookie')!.split(';')[0];
    expect(cookie).toMatch(/^sessionid=\w+$/);
    const withCookie = await ctx.api<WireChanges>('GET', PULL, { auth: null, headers: { Cookie: cookie } });
    expect(withCookie.status).toBe(200);
    expect((await ctx.api('POST', '/api/2/auth/alice/logout.json', { auth: null, headers: { Cookie: cookie } })).status).toBe(200);
    expect((await ctx.api('GET', PULL, { auth: null, headers: { Cookie: cookie } })).status).toBe(401);
    expect((await ctx.api('GET', '/api/2/auth/alice/login.json')).status).toBe(405);
  });

  it('redacts credentials and cookies in the request log', async () => {
    await ctx.api('GET', PULL, { headers: { Cookie: 'sessionid=abc' } });
    expect(ctx.server.log()[0].headers).toMatchObject({ authorization: '<redacted>', cookie: '<redacted>' });
  });

  it('a reset forgets sessions', async () => {
    const login = await ctx.api('POST', '/api/2/auth/alice/login.json');
    const cookie = login.headers.get('set-cookie')!.split(';')[0];
    ctx.server.reset();
    ctx.server.registerDevice('web');
    expect((await ctx.api('GET', PULL, { auth: null, headers: { Cookie: cookie } })).status).toBe(401);
  });
});

describe('opodsync', () => {
  const ctx = gpodderServerPerFile({ dialect: 'opodsync' });

  it('words each 401 in JSON with its own challenge', async () => {
    const cases: [Parameters<typeof ctx.api>[2], string][] = [
      [{ auth: null }, 'session cookie is required'],
      [{ auth: { user: 'alice', password: 'wrong' } }, 'Invalid username/password'],
      [{ auth: { user: 'bob', password: 'x' } }, 'Invalid username'],
    ];
    for (const [opts, message] of cases) {
      const res = await ctx.api('GET', PULL, opts);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ code: 401, message });
      expect(res.headers.get('www-authenticate')).toBe('Basic realm="Please login"');
    }
  });

  it('answers a login with a notice and a cookie, and a login without credentials with 401', async () => {
    const login = await ctx.api('POST', '/api/2/auth/alice/login.json');
    expect(login.body).toEqual({ code: 200, message: 'Logged in!' });
    expect(login.headers.get('set-cookie')).toMatch(/^sessionid=/);
    const none = await ctx.api('POST', '/api/2/auth/alice/login.json', { auth: null });
    expect(none.body).toEqual({ code: 401, message: 'No username or password provided' });
  });
});
