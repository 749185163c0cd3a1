// Time against the engine (issue 16), in simulated time so that counts per minute are exact whatever the
// machine's load: a 2xx that does not validate must not make uploads and pulls spin (item 14), and a device
// clock that is off or steps must not stretch a hold beyond what the server asked for (item 8).
import { afterEach, describe, expect, it } from 'vitest';
import type { Clock, SyncOptions } from '../../src/types.ts';
import { createSyncEngine, type SyncEngine } from '../../worker/index.ts';
import { Scope } from '../chaos/fixtures.ts';
import { prng } from '../chaos/prng.ts';
import { createSimulation, type Simulation } from '../chaos/sim.ts';
import { startGpodderServer } from '../server/gpodder/server.ts';
import { server, TOKEN, uniqueDb } from './helpers.ts';

const scope = new Scope();
afterEach(() => scope.close());

/** A simulation, and a device clock on it that a test can step (`offset`); monotonic time never steps. */
function world(seed: number): { sim: Simulation; clock: Clock; offset: { ms: number } } {
  const rng = prng(seed);
  const sim = createSimulation(() => rng.next());
  scope.defer(() => sim.stop());
  const offset = { ms: 0 };
  const clock: Clock = { ...sim.clock, now: () => sim.now() + offset.ms, monotonic: () => sim.now() };
  return { sim, clock, offset };
}

/** What the engine sent, by kind. */
interface Counts {
  /** Requests that write subscriptions (not a gPodder device registration). */
  writes: number;
  pulls: number;
  all: number;
}

/**
 * A fetch on simulated time: `answer` may reply instead of the server. Past 300 requests it stops answering
 * (the engine's timeout ends each), so a spinning engine cannot keep simulated time from moving.
 */
function simFetch(sim: Simulation, answer: (method: string, url: URL) => Response | undefined): { fetch: typeof fetch; counts: Counts } {
  const counts: Counts = { writes: 0, pulls: 0, all: 0 };
  const f = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(String(input));
    const method = init?.method ?? 'GET';
    counts.all++;
    if (method === 'GET' && url.pathname.includes('/subscriptions')) counts.pulls++;
    if (method !== 'GET' && url.pathname.includes('/subscriptions')) counts.writes++;
    if (counts.all > 300) {
      return new Promise<Response>((_, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal!.reason), { once: true }));
    }
    return answer(method, url) ?? sim.exclusive(() => fetch(url, init));
  }) as typeof fetch;
  return { fetch: f, counts };
}

function open(options: Partial<SyncOptions> & Pick<SyncOptions, 'baseUrl'>): SyncEngine {
  const e = createSyncEngine({
    auth: { type: 'bearer', token: TOKEN },
    dbName: uniqueDb('time'),
    pullInterval: 0,
    pushDelay: 0,
    timeout: 3000,
    retry: { baseDelay: 1000, maxDelay: 30_000 },
    ...options,
  });
  scope.defer(() => e.close());
  return e;
}

const html = () => new Response('<!doctype html><html><body><form action="/login">Sign in</form></body></html>', { status: 200, headers: { 'Content-Type': 'text/html' } });
const json = (body: unknown) => new Response(JSON.stringify(body), { status: 200, headers: { 'Content-Type': 'application/json' } });

describe('a 2xx that does not validate does not spin (item 14)', () => {
  const answers: [string, () => Response][] = [
    ['an HTML login page', html],
    ['a number for subscription_changed', () => json({ is_subscribed: false, subscription_changed: 5 })],
  ];
  for (const [what, body] of answers) {
    it(`a PATCH answered with ${what}: a forced push waits for the backoff; a handful of PATCHes and pulls a minute`, async () => {
      const { sim, clock } = world(14);
      const s = await server({ seed: 3, time: sim.serverTime });
      const { fetch, counts } = simFetch(sim, (method) => (method === 'PATCH' ? body() : undefined));
      const e = open({ baseUrl: s.url, fetch, clock });
      await e.sync();
      await e.update(s.state()[0]!.guid, { isSubscribed: false });
      await e.sync();
      expect(counts.writes).toBe(1);
      // A sync after it pulls (the pull works) and forces a push, which still waits out the change's backoff.
      await e.sync();
      expect(counts.writes).toBe(1);
      await sim.sleep(60_000);
      // Backoff from 1 s doubling to 30 s: 1 + 6 or 7 attempts in a minute, and one reconciling pull each.
      expect(counts.writes).toBeLessThanOrEqual(10);
      expect(counts.pulls).toBeLessThanOrEqual(counts.writes + 3);
      expect((await e.pending()).map((p) => p.lastError?.code)).toEqual(['bad-response']);
    });
  }

  it('gPodder: uploads answered with an HTML page while pulls work: a handful a minute', async () => {
    const { sim, clock } = world(15);
    const s = await startGpodderServer({ port: 0, dialect: 'opodsync', time: sim.serverTime });
    scope.defer(() => s.close());
    const { fetch, counts } = simFetch(sim, (method, url) => (method === 'POST' && url.pathname.includes('/subscriptions') ? html() : undefined));
    const e = open({ baseUrl: s.url, protocol: 'gpodder', auth: { type: 'basic', username: 'alice', password: 'alice-password' }, device: 'web-player', fetch, clock, pushDelay: 600_000 });
    await e.sync();
    // One change: how a batch of changes with their own backoffs is grouped is another matter (issue 16 item 6).
    await e.add('https://feeds.example/spin.xml');
    await e.sync();
    expect(counts.writes).toBe(1);
    await e.sync();
    expect(counts.writes).toBe(1);
    await sim.sleep(60_000);
    expect(counts.writes).toBeLessThanOrEqual(10);
    expect(counts.pulls).toBeLessThanOrEqual(counts.writes + 3);
    expect((await e.pending()).map((p) => p.lastError?.code)).toEqual(['bad-response']);
  });
});

describe('holds are never longer than the server asked (item 8)', () => {
  it("a Retry-After date is read against the response's Date: a device an hour behind waits 10 s, not an hour", async () => {
    const { sim, clock, offset } = world(8);
    offset.ms = -3_600_000;
    const s = await server({ seed: 2, time: sim.serverTime });
    let busy = true;
    const { fetch, counts } = simFetch(sim, (method) => {
      if (method !== 'PATCH' || !busy) return undefined;
      busy = false;
      const at = (ms: number) => new Date(sim.now() + ms).toUTCString();
      return new Response('{"code":503,"message":"busy"}', { status: 503, headers: { Date: at(0), 'Retry-After': at(10_000), 'Content-Type': 'application/json' } });
    });
    const e = open({ baseUrl: s.url, fetch, clock });
    await e.sync();
    const guid = s.state()[0]!.guid;
    await e.update(guid, { isSubscribed: false });
    await e.sync();
    expect(await e.pending()).toHaveLength(1);
    await sim.sleep(11_000);
    await e.sync();
    expect(await e.pending()).toEqual([]);
    expect(counts.writes).toBe(2);
    expect(s.state().find((x) => x.guid === guid)!.is_subscribed).toBe(false);
  });

  it('a device clock stepping back an hour during a 1 s hold does not block sync()', async () => {
    const { sim, clock, offset } = world(9);
    const s = await server({ seed: 2, time: sim.serverTime });
    const { fetch } = simFetch(sim, () => undefined);
    const e = open({ baseUrl: s.url, fetch, clock });
    await e.sync();
    await e.update(s.state()[0]!.guid, { isSubscribed: false });
    s.failNext(1, 503, { method: 'PATCH' }, { retryAfter: 1 });
    await e.sync();
    expect(await e.pending()).toHaveLength(1);
    offset.ms = -3_600_000;
    await sim.sleep(2000);
    await e.sync();
    expect(await e.pending()).toEqual([]);
  });

  it('a hold stored before a reload ends when the clock went back before it was set', async () => {
    const { sim, clock, offset } = world(10);
    const s = await server({ seed: 2, time: sim.serverTime });
    const { fetch } = simFetch(sim, () => undefined);
    const dbName = uniqueDb('time-reload');
    const first = open({ baseUrl: s.url, fetch, clock, dbName });
    await first.sync();
    await first.update(s.state()[0]!.guid, { isSubscribed: false });
    s.failNext(1, 503, { method: 'PATCH' }, { retryAfter: 10 });
    await first.sync();
    expect(await first.pending()).toHaveLength(1);
    await first.close();
    offset.ms = -3_600_000;
    await sim.sleep(1000);
    // A new engine (a reload) cannot tell how long it was away: the hold's start is in its future, so it is over.
    const second = open({ baseUrl: s.url, fetch, clock, dbName });
    await second.sync();
    expect(await second.pending()).toEqual([]);
  });

  it('a clock stepping forward during a hold does not cut it short, and the hold ends when it should', async () => {
    const { sim, clock, offset } = world(11);
    const s = await server({ seed: 2, time: sim.serverTime });
    const { fetch, counts } = simFetch(sim, () => undefined);
    const e = open({ baseUrl: s.url, fetch, clock });
    await e.sync();
    await e.update(s.state()[0]!.guid, { isSubscribed: false });
    s.failNext(1, 503, { method: 'PATCH' }, { retryAfter: 10 });
    await e.sync();
    offset.ms = 3_600_000;
    await e.sync();
    expect(counts.writes).toBe(1);
    await sim.sleep(11_000);
    expect(await e.pending()).toEqual([]);
    expect(counts.writes).toBe(2);
  });
});
