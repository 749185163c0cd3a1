import { describe, expect, it } from 'vitest';
import { createApi } from '../server/client.ts';
import { serverPerFile } from './server-fixture.ts';
import { startServer } from '../server/server.ts';

const UNAUTHORIZED = { code: 401, message: 'User not authorized' };

const ctx = serverPerFile();

describe('auth', () => {
  it('answers 401 with the sample body and JSON type when no token is sent', async () => {
    const res = await ctx.api('GET', '/subscriptions', { token: null });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(UNAUTHORIZED);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('refuses a wrong token, a non-bearer scheme and an empty bearer', async () => {
    for (const headers of [{ Authorization: 'Bearer nope' }, { Authorization: 'Basic ZGVtbzpkZW1v' }, { Authorization: 'Bearer ' }]) {
      const res = await ctx.api('GET', '/subscriptions', { token: null, headers });
      expect(res.status, headers.Authorization).toBe(401);
    }
  });

  it('checks auth before routing, method and validation', async () => {
    const entry = ctx.server.foreign.add('https://a.example/feed.xml');
    const cases: Array<[string, string, unknown]> = [
      ['GET', '/nowhere', undefined],
      ['PUT', '/subscriptions', undefined],
      ['PATCH', `/subscriptions/${entry.guid}`, {}],
      ['GET', '/subscriptions?page=zero', undefined],
      ['GET', '/deletions/abc', undefined],
      ['DELETE', '/subscriptions/unknown', undefined],
    ];
    for (const [method, path, body] of cases) {
      const res = await ctx.api(method, path, { token: 'wrong', body });
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    }
    expect(ctx.server.entry(entry.guid)?.is_subscribed).toBe(true);
  });

  it('accepts a case-insensitive scheme', async () => {
    const res = await ctx.api('GET', '/subscriptions', { token: null, headers: { Authorization: 'bearer demo-token' } });
    expect(res.status).toBe(200);
  });

  it('accepts each of several configured tokens and only those', async () => {
    const multi = await startServer({ port: 0, token: ['alpha', 'beta'] });
    try {
      expect((await createApi(multi.url, 'alpha')('GET', '/subscriptions')).status).toBe(200);
      expect((await createApi(multi.url, 'beta')('GET', '/subscriptions')).status).toBe(200);
      expect((await createApi(multi.url, 'demo-token')('GET', '/subscriptions')).status).toBe(401);
    } finally {
      await multi.close();
    }
  });
});

describe('routing errors', () => {
  it('answers unknown /v1 routes with 404 and the sample body', async () => {
    for (const path of ['/nowhere', '/subscriptions/a/b', '/deletions', '/']) {
      const res = await ctx.api('GET', path);
      expect(res.status, path).toBe(404);
      expect(res.body).toEqual({ code: 404, message: 'Resource not found' });
    }
  });

  it('answers paths outside /v1 with a JSON 404', async () => {
    const res = await fetch(`${ctx.server.origin}/subscriptions`, { headers: { Authorization: 'Bearer demo-token' } });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ code: 404, message: 'Resource not found' });
  });

  it('answers a wrong method with 405, an error body and Allow', async () => {
    const cases: Array<[string, string, string]> = [
      ['PUT', '/subscriptions', 'GET, POST'],
      ['DELETE', '/subscriptions', 'GET, POST'],
      ['POST', '/subscriptions/abc', 'GET, PATCH, DELETE'],
      ['DELETE', '/deletions/1', 'GET'],
    ];
    for (const [method, path, allow] of cases) {
      const res = await ctx.api(method, path);
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.body).toEqual({ code: 405, message: 'Method not allowed' });
      expect(res.headers.get('allow')).toBe(allow);
    }
  });

  it('tolerates one trailing slash on a route', async () => {
    expect((await ctx.api('GET', '/subscriptions/')).status).toBe(200);
  });

  it('sends code as a string when asked, and as a number again after reset', async () => {
    ctx.server.errorCodeAsString(true);
    expect((await ctx.api('GET', '/nowhere')).body).toEqual({ code: '404', message: 'Resource not found' });
    expect((await ctx.api('GET', '/subscriptions', { token: null })).body).toEqual({ code: '401', message: 'User not authorized' });
    ctx.server.reset();
    expect((await ctx.api('GET', '/nowhere')).body).toEqual({ code: 404, message: 'Resource not found' });
  });
});

describe('CORS', () => {
  it('answers a preflight with 204 and no token, echoing the requested headers', async () => {
    const res = await fetch(`${ctx.server.url}/subscriptions/abc`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'http://localhost:5173',
        'Access-Control-Request-Method': 'PATCH',
        'Access-Control-Request-Headers': 'authorization,content-type,x-client-id',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-headers')).toBe('authorization,content-type,x-client-id');
    expect(res.headers.get('access-control-allow-methods')).toBe('GET,POST,PATCH,DELETE,OPTIONS');
    expect(res.headers.get('access-control-expose-headers')).toBe('Retry-After');
  });

  it('puts the CORS headers on ordinary and error answers', async () => {
    for (const res of [await ctx.api('GET', '/subscriptions'), await ctx.api('GET', '/subscriptions', { token: null })]) {
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
      expect(res.headers.get('access-control-expose-headers')).toBe('Retry-After');
    }
  });

  it('forbids caching of answers', async () => {
    expect((await ctx.api('GET', '/subscriptions')).headers.get('cache-control')).toBe('no-store');
  });
});
