// Found by the chaos soak's bulk family (issue 33; gPodder chaos seeds 12 and 103): many adds queued at once
// (addMany, an OPML import) while a proxy answers every upload with a 200 login page and pulls still work. Each
// add may have arrived, so each waits for a pull and then goes again: with one backoff per change instead of one
// for the server, the engine pulls and uploads in a loop (the soak stops it at 800 timers in a simulated second).
// One add alone backs off (engine.hostile-time.test.ts); forty must too.
import { afterEach, describe, expect, it } from 'vitest';
import { createSyncEngine } from '../../worker/index.ts';
import { Scope } from '../chaos/fixtures.ts';
import { prng } from '../chaos/prng.ts';
import { createSimulation } from '../chaos/sim.ts';
import { startGpodderServer } from '../server/gpodder/server.ts';
import { uniqueDb } from './helpers.ts';

const scope = new Scope();
afterEach(() => scope.close());

const html = () => new Response('<!doctype html><html><body><form action="/login">Sign in</form></body></html>', { status: 200, headers: { 'Content-Type': 'text/html' } });

describe('gPodder: forty adds whose uploads a proxy answers with a login page', () => {
  it('back off as one: no second of simulated time fires hundreds of timers', async () => {
    const rng = prng(12);
    const sim = createSimulation(() => rng.next());
    scope.defer(() => sim.stop());
    const s = await startGpodderServer({ port: 0, dialect: 'opodsync', time: sim.serverTime });
    scope.defer(() => s.close());
    const counts = { writes: 0, pulls: 0 };
    /** When each upload was made (simulated ms). */
    const uploads: number[] = [];
    const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = new URL(String(input));
      const method = init?.method ?? 'GET';
      const subscriptions = url.pathname.includes('/subscriptions');
      if (subscriptions && method === 'GET') counts.pulls++;
      if (subscriptions && method === 'POST') {
        counts.writes++;
        uploads.push(sim.now());
        await sim.sleep(0);
        return html();
      }
      return sim.exclusive(() => globalThis.fetch(url, init));
    }) as typeof globalThis.fetch;
    const e = createSyncEngine({
      protocol: 'gpodder',
      baseUrl: s.url,
      auth: { type: 'basic', username: 'alice', password: 'alice-password' },
      device: 'web-player',
      dbName: uniqueDb('bulk-portal'),
      pullInterval: 0,
      pushDelay: 0,
      timeout: 600,
      retry: { baseDelay: 10, maxDelay: 1000 },
      fetch,
      clock: sim.clock,
    });
    scope.defer(() => e.close());
    await e.sync();
    e.setOnline(false);
    const report = await e.addMany(Array.from({ length: 40 }, (_, i) => `https://feeds.example/bulk-portal/${i}.xml`));
    expect(report.added).toHaveLength(40);
    let runaway: string | undefined;
    sim.onRunaway = (message) => (runaway ??= message);
    e.setOnline(true);
    await sim.sleep(10_000);
    // The soak's bound (sim.ts): its busiest healthy second fires about 200 timers; a loop fires 800 and more.
    expect(runaway).toBeUndefined();
    // Backoff from 10 ms doubling to 1 s: 8 uploads in the first 640 ms, then one per 0.5-1 s.
    const busiest = Math.max(...uploads.map((at) => uploads.filter((t) => t >= at && t < at + 1000).length));
    expect(busiest).toBeLessThanOrEqual(12);
  });
});
