// What the HTTP layer makes of answers a polite server never gives (issue 16): an empty 2xx from a proxy that
// never forwarded the request, a body of many megabytes, a redirect to another origin, a Retry-After of a year.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createSyncEngine } from '../../worker/index.ts';
import { systemClock } from '../../worker/clock.ts';
import { MAX_BODY_BYTES } from '../../worker/http-body.ts';
import { parseRetryAfter } from '../../worker/http.ts';
import type { Clock } from '../../src/types.ts';
import { startGpodderServer } from '../server/gpodder/server.ts';
import { wallTime } from '../server/listen.ts';
import { otherOrigin, Scope } from '../chaos/fixtures.ts';
import { abortable, partedBody } from '../chaos/transport.ts';
import { engine, picture, requests, server, serverPicture, settle, spyFetch, uniqueDb } from './helpers.ts';

const scope = new Scope();
afterEach(() => scope.close());

const MiB = 1024 * 1024;

/** A body of `total` bytes made only as it is read; `pulled()` says how many bytes were asked for. */
function lazyBody(total: number, chunk = MiB) {
  let pulled = 0;
  const piece = new Uint8Array(chunk).fill(0x20);
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (pulled >= total) return controller.close();
        pulled += chunk;
        controller.enqueue(piece);
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, pulled: () => pulled };
}

/** A listener on 127.0.0.1 that redirects every request to `to` + its path. */
async function redirector(to: string, status = 302): Promise<string> {
  const listener = http.createServer((req, res) => {
    res.writeHead(status, { Location: `${to}${req.url ?? '/'}` });
    res.end();
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  scope.defer(() => new Promise<void>((r) => (listener.close(() => r()), listener.closeAllConnections())));
  return `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
}

describe('an empty 2xx acknowledges nothing (item 1)', () => {
  for (const status of [200, 201, 202]) {
    it(`an empty ${status} to a PATCH or a DELETE keeps the change queued; it is sent for real later`, async () => {
      const s = await server({ seed: 4 });
      const e = engine(s);
      await e.sync();
      const [a, b] = s.state();
      await e.update(a!.guid, { isSubscribed: false });
      await e.remove(b!.guid);
      // A proxy answers both without forwarding them.
      s.failNext(1, status, { method: 'PATCH' }, { body: '' });
      s.failNext(1, status, { method: 'DELETE' }, { body: '' });
      await settle(e);
      // Each went again after the empty answer (which acknowledged nothing), and the server has both now.
      expect(requests(s, 'PATCH').length).toBeGreaterThanOrEqual(2);
      expect(requests(s, 'DELETE').length).toBeGreaterThanOrEqual(2);
      expect(s.state().find((x) => x.guid === a!.guid)!.is_subscribed).toBe(false);
      expect(s.state().find((x) => x.guid === b!.guid)!.deleted).toBeDefined();
      expect(picture(await e.subscriptions())).toEqual(serverPicture(s));
    });
  }

  it('a 204 is "applied, no body": the PATCH is acknowledged by it', async () => {
    const s = await server({ seed: 2 });
    const e = engine(s);
    await e.sync();
    const guid = s.state()[0]!.guid;
    await e.update(guid, { isSubscribed: false });
    s.failNext(1, 204, { method: 'PATCH' }, { body: '', afterHandling: true });
    await e.sync();
    expect(await e.pending()).toEqual([]);
    expect(requests(s, 'PATCH')).toHaveLength(1);
    expect((await e.subscription(guid))!.isSubscribed).toBe(false);
  });

  it('gPodder: an empty 200 to an upload keeps the change queued (mygpo registers its device with an empty 200 still)', async () => {
    let now = 1_700_000_000_000;
    const s = await startGpodderServer({ port: 0, dialect: 'mygpo', time: { ...wallTime, now: () => (now += 1000) } });
    scope.defer(() => s.close());
    const e = createSyncEngine({
      protocol: 'gpodder',
      baseUrl: s.url,
      auth: { type: 'basic', username: 'alice', password: 'alice-password' },
      device: 'web-player',
      dbName: uniqueDb('gpodder-empty'),
      pullInterval: 0,
      pushDelay: 0,
      timeout: 3000,
      retry: { baseDelay: 10, maxDelay: 100 },
    });
    scope.defer(() => e.close());
    await e.sync();
    await e.add('https://feeds.example/empty-200.xml');
    s.failNext(1, 200, { method: 'POST', path: /subscriptions/ }, { body: '' });
    await e.sync();
    expect((await e.pending()).map((p) => p.lastError?.code)).toEqual(['bad-response']);
    expect(s.subscribed({ device: 'web-player' })).not.toContain('https://feeds.example/empty-200.xml');
    await settle(e);
    expect(s.subscribed({ device: 'web-player' })).toContain('https://feeds.example/empty-200.xml');
  });
});

describe('a body is read up to a bound (item 13)', () => {
  it(`a 64 MiB page is refused as bad-response after at most ${MAX_BODY_BYTES / MiB} MiB read; store and cursor stay`, async () => {
    const s = await server({ seed: 3 });
    let body: ReturnType<typeof lazyBody> | undefined;
    let declared: number | undefined;
    const fetch = spyFetch(async (url, init, real) => {
      if (!body || (init?.method ?? 'GET') !== 'GET') return real(url, init);
      const headers: Record<string, string> = { 'Content-Type': 'application/json' };
      if (declared !== undefined) headers['Content-Length'] = String(declared);
      return new Response(body.stream, { status: 200, headers });
    });
    const e = engine(s, { fetch });
    await e.sync();
    const before = { list: picture(await e.subscriptions()), cursor: (await e.status()).cursor };
    for (const announce of [undefined, 64 * MiB]) {
      body = lazyBody(64 * MiB);
      declared = announce;
      const error = await e.sync().catch((x: unknown) => x);
      expect(error).toMatchObject({ code: 'bad-response', status: 200 });
      // Streamed with a limit: never the whole body (and nothing at all when Content-Length says it is too big).
      expect(body.pulled()).toBeLessThanOrEqual(announce ? MiB : MAX_BODY_BYTES + MiB);
      expect({ list: picture(await e.subscriptions()), cursor: (await e.status()).cursor }).toEqual(before);
    }
  });

  it('a huge error page still counts by its status (a 503 is retried, not refused)', async () => {
    const s = await server({ seed: 1 });
    let big = false;
    const fetch = spyFetch(async (url, init, real) => {
      if (!big) return real(url, init);
      return new Response(lazyBody(64 * MiB).stream, { status: 503, headers: { 'Content-Type': 'text/html' } });
    });
    const e = engine(s, { fetch });
    await e.sync();
    big = true;
    await expect(e.sync()).rejects.toMatchObject({ code: 'server', status: 503 });
  });
});

describe('the timeout measures silence, and a request has a bound in all', () => {
  /** An engine whose pulls get the server's real answer, dripped as `gaps` says. */
  async function dripping(gaps: number[], parts = 6, timeout = 300) {
    const s = await server({ seed: 2 });
    let on = false;
    const fetch = spyFetch(async (url, init, real) => {
      const answer = await real(url, init);
      if (!on || (init?.method ?? 'GET') !== 'GET') return answer;
      return new Response(partedBody(await answer.text(), { parts, gaps }, abortable, init?.signal), { status: answer.status, headers: answer.headers });
    });
    const e = engine(s, { fetch, timeout, pageSize: 500 });
    await e.sync();
    // News for the next pull: a body of some size.
    s.seed(40);
    const before = { list: picture(await e.subscriptions()), cursor: (await e.status()).cursor };
    on = true;
    return { s, e, before };
  }

  it('a body that keeps coming is read, however long it takes in all', async () => {
    // Six parts 120 ms apart: 720 ms in all, more than twice the 300 ms timeout, never 300 ms silent.
    const { e } = await dripping([120]);
    await e.sync();
    expect((await e.subscriptions()).length).toBe(42);
    expect((await e.status()).lastError).toBeUndefined();
  });

  it('a pause in the body longer than the timeout fails `timeout`; store and cursor stay', async () => {
    const { e, before } = await dripping([20, 20, 450]);
    const error = await e.sync().catch((x: unknown) => x);
    expect(error).toMatchObject({ code: 'timeout' });
    expect(String((error as Error).message)).toMatch(/no answer within 300 ms/);
    expect({ list: picture(await e.subscriptions()), cursor: (await e.status()).cursor }).toEqual(before);
  });

  it('a body that drips for ever is cut at ten timeouts', async () => {
    // A part every 20 ms of a body in 1,000 parts (20 s): never silent for the 50 ms timeout.
    const { e, before } = await dripping([20], 1000, 50);
    const started = Date.now();
    const error = await e.sync().catch((x: unknown) => x);
    expect(error).toMatchObject({ code: 'timeout' });
    expect(String((error as Error).message)).toMatch(/the answer took over 500 ms/);
    // Cut at the bound, not after the 20 s the body would take.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect({ list: picture(await e.subscriptions()), cursor: (await e.status()).cursor }).toEqual(before);
  });
});

describe('a redirect is an answer, not a lost connection (item 15)', () => {
  it('a pull redirected to another origin fails as bad-response with its status; online, no retry scheduled, nothing sent there', async () => {
    const other = await otherOrigin(scope);
    const away = await redirector(other.origin);
    const s = await server({ seed: 3 });
    let redirect = false;
    const retries: number[] = [];
    const clock: Clock = { ...systemClock, setTimeout: (fn, ms) => (retries.push(ms), systemClock.setTimeout(fn, ms)) };
    const fetch = spyFetch((url, init, real) => (redirect && (init?.method ?? 'GET') === 'GET' ? real(`${away}${url.pathname}${url.search}`, init) : real(url, init)));
    const e = engine(s, { fetch, clock, retry: { baseDelay: 7000, maxDelay: 7000 } });
    await e.sync();
    redirect = true;
    retries.length = 0;
    const error = await e.sync().catch((x: unknown) => x);
    expect(error).toMatchObject({ code: 'bad-response', status: 302 });
    expect((error as Error).message).toContain(other.origin);
    const status = await e.status();
    expect(status.online).toBe(true);
    expect(status.lastError).toMatchObject({ code: 'bad-response', status: 302 });
    // No pull retry with backoff (3.5 to 7 s here): a transient error would have set one.
    expect(retries.filter((ms) => ms >= 3500 && ms <= 7000)).toEqual([]);
    expect(other.received).toEqual([]);
  });

  it('a PATCH redirected goes to failed() with the redirect as its reason (not retried for ever)', async () => {
    const other = await otherOrigin(scope);
    const away = await redirector(other.origin, 307);
    const s = await server({ seed: 3 });
    const fetch = spyFetch((url, init, real) => (init?.method === 'PATCH' ? real(`${away}${url.pathname}`, init) : real(url, init)));
    const e = engine(s, { fetch });
    await e.sync();
    const guid = s.state()[0]!.guid;
    await e.update(guid, { isSubscribed: false });
    const report = await e.sync();
    expect(report.failed).toBe(1);
    expect(await e.pending()).toEqual([]);
    const [failed] = await e.failed();
    expect(failed!.reason).toMatchObject({ code: 'bad-response', status: 307 });
    expect(failed!.reason.message).toMatch(/redirect/);
    expect((await e.status()).online).toBe(true);
    expect(other.received).toEqual([]);
  });

  it("a browser's opaque redirect (status 0) is the same refusal", async () => {
    const s = await server({ seed: 1 });
    const fetch = spyFetch(async () => {
      const response = new Response(null, { status: 200 });
      return Object.defineProperties(response, { type: { value: 'opaqueredirect' }, status: { value: 0 }, ok: { value: false } });
    });
    const e = engine(s, { fetch });
    const error = await e.sync().catch((x: unknown) => x);
    expect(error).toMatchObject({ code: 'bad-response' });
    // What happened, and what the app can do about it.
    expect((error as Error).message).toMatch(/redirect.*set baseUrl to the server's own address/);
    expect((await e.status()).online).toBe(true);
  });
});

describe('server delays are capped and timers clamped (item 9)', () => {
  it('reads a Retry-After of a year as 24 h', () => {
    expect(parseRetryAfter('31536000', 0)).toBe(24 * 3600 * 1000);
    expect(parseRetryAfter(new Date(Date.UTC(2030, 0, 1)).toUTCString(), Date.UTC(2026, 0, 1))).toBe(24 * 3600 * 1000);
  });

  it('a Retry-After of a year and an interval of years set no timer beyond 2^31-1 ms (which would fire at once)', async () => {
    const s = await server({ seed: 3 });
    const delays: number[] = [];
    const clock: Clock = { ...systemClock, setTimeout: (fn, ms) => (delays.push(ms), systemClock.setTimeout(fn, ms)) };
    const e = engine(s, { clock, pullInterval: 1e12 });
    await e.sync();
    const guid = s.state()[0]!.guid;
    await e.update(guid, { isSubscribed: false });
    s.failNext(1, 429, { method: 'PATCH' }, { retryAfter: 31_536_000 });
    await e.sync();
    s.failNext(1, 503, { method: 'GET' }, { retryAfter: 31_536_000 });
    await expect(e.sync()).rejects.toMatchObject({ code: 'server', retryAfter: 24 * 3600 * 1000 });
    expect(Math.max(...delays)).toBeLessThanOrEqual(2 ** 31 - 1);
    // The push waits for the change's hold, and the pull retry for its Retry-After: 24 h each, not at once.
    expect(delays.filter((ms) => ms >= 24 * 3600 * 1000 - 1000 && ms <= 24 * 3600 * 1000).length).toBeGreaterThanOrEqual(2);
    expect(requests(s, 'PATCH')).toHaveLength(1);
  });
});
