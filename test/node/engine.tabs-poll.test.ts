// Many tabs poll like one (issue 34): three engines on one database (one leader under a Web Locks stand-in,
// the tabs' BroadcastChannel between them), in simulated time so that counts per interval are exact. Each
// visible tab ticks every `pullInterval` and a follower's tick asks the leader: the leader still pulls at most
// once per interval, and focus or visibility in any tab joins that pull instead of making one of its own.
import { afterEach, describe, expect, it } from 'vitest';
import type { Clock, SyncOptions } from '../../src/types.ts';
import { createSyncEngine, type SyncEngine } from '../../worker/index.ts';
import { Scope } from '../chaos/fixtures.ts';
import { prng } from '../chaos/prng.ts';
import { createSimulation, type Simulation } from '../chaos/sim.ts';
import { server, TOKEN, uniqueDb } from './helpers.ts';

const scope = new Scope();
afterEach(() => scope.close());

/** Web Locks for one process: the first to ask holds a lock, the next gets it when released. */
function fifoLocks(): void {
  const queues = new Map<string, (() => void)[]>();
  const before = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
  const request = (name: string, options: { signal?: AbortSignal }, callback: () => Promise<void>) =>
    new Promise<void>((resolve) => {
      const queue = queues.get(name) ?? (queues.set(name, []).get(name)!);
      const grant = () => void callback().then(() => {
        queue.shift();
        queue[0]?.();
        resolve();
      });
      options.signal?.addEventListener('abort', () => {
        const at = queue.indexOf(grant);
        if (at > 0) queue.splice(at, 1);
        resolve();
      });
      queue.push(grant);
      if (queue.length === 1) grant();
    });
  Object.defineProperty(globalThis, 'navigator', { configurable: true, value: { locks: { request } } });
  scope.defer(() => (before ? Object.defineProperty(globalThis, 'navigator', before) : delete (globalThis as { navigator?: unknown }).navigator));
}

function world(seed: number): { sim: Simulation; clock: Clock } {
  const rng = prng(seed);
  const sim = createSimulation(() => rng.next());
  scope.defer(() => sim.stop());
  return { sim, clock: sim.clock };
}

/** A fetch on simulated time that counts the pulls (list requests). */
function countingFetch(sim: Simulation): { fetch: typeof fetch; pulls: number[] } {
  const pulls: number[] = [];
  const f = ((input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(String(input));
    if ((init?.method ?? 'GET') === 'GET' && url.pathname.endsWith('/subscriptions')) pulls.push(sim.now());
    return sim.exclusive(() => fetch(url, init));
  }) as typeof fetch;
  return { fetch: f, pulls };
}

/** `n` tabs on one database, opened `gap` ms apart (so their ticks fall at different times), the first leading. */
async function tabs(sim: Simulation, n: number, gap: number, options: Partial<SyncOptions> & Pick<SyncOptions, 'baseUrl'>): Promise<SyncEngine[]> {
  const dbName = uniqueDb('tabs-poll');
  const opened: SyncEngine[] = [];
  for (let i = 0; i < n; i++) {
    const e = createSyncEngine({ auth: { type: 'bearer', token: TOKEN }, pushDelay: 0, timeout: 3000, retry: { baseDelay: 1000, maxDelay: 30_000 }, ...options, dbName });
    scope.defer(() => e.close());
    opened.push(e);
    await sim.sleep(gap);
  }
  return opened;
}

describe('N visible tabs poll like one (issue 34)', () => {
  it('one tab: a pull on start and one per pullInterval', async () => {
    fifoLocks();
    const { sim, clock } = world(34);
    const s = await server({ seed: 2, time: sim.serverTime });
    const { fetch, pulls } = countingFetch(sim);
    await tabs(sim, 1, 0, { baseUrl: s.url, fetch, clock, pullInterval: 1000 });
    await sim.sleep(500);
    const from = sim.now();
    await sim.sleep(5000);
    expect(pulls.filter((t) => t >= from)).toHaveLength(5);
  });

  it('three visible tabs with pullInterval 1000: the server sees one tab’s pulls (5 in 5 s), not three', async () => {
    fifoLocks();
    const { sim, clock } = world(35);
    const s = await server({ seed: 2, time: sim.serverTime });
    const { fetch, pulls } = countingFetch(sim);
    const open = await tabs(sim, 3, 333, { baseUrl: s.url, fetch, clock, pullInterval: 1000 });
    expect((await Promise.all(open.map((e) => e.status()))).map((x) => x.leader)).toEqual([true, false, false]);
    await sim.sleep(500);
    const from = sim.now();
    await sim.sleep(5000);
    const seen = pulls.filter((t) => t >= from);
    expect(seen.length).toBeLessThanOrEqual(6);
    // At most one pull begins within any interval.
    for (let i = 1; i < seen.length; i++) expect(seen[i]! - seen[i - 1]!).toBeGreaterThanOrEqual(1000);
  });

  it('focus and visibility in every tab, right after a pull, join the next pull instead of making their own', async () => {
    fifoLocks();
    const { sim, clock } = world(36);
    const s = await server({ seed: 2, time: sim.serverTime });
    const { fetch, pulls } = countingFetch(sim);
    const open = await tabs(sim, 3, 10, { baseUrl: s.url, fetch, clock, pullInterval: 10_000 });
    await open[0]!.sync();
    const from = pulls.length;
    // Each tab is hidden and shown again, then focused (a browser sends both as a tab comes to the front).
    for (const e of open) {
      e.setVisible(false);
      e.setVisible(true);
      e.setVisible(true);
      await sim.sleep(100);
    }
    await sim.sleep(2000);
    expect(pulls.slice(from)).toEqual([]);
    // They joined the next one: it comes when the interval since the last pull is over.
    await sim.sleep(8000);
    expect(pulls.slice(from)).toHaveLength(1);
  });

  it('an explicit sync() between pulls keeps the next one where it was set: focus after it joins that pull, no second one is set', async () => {
    fifoLocks();
    const { sim, clock } = world(38);
    const s = await server({ seed: 2, time: sim.serverTime });
    const { fetch, pulls } = countingFetch(sim);
    const [e] = await tabs(sim, 1, 0, { baseUrl: s.url, fetch, clock, pullInterval: 10_000 });
    await e!.sync();
    // Focus right after a pull: the next one is set for when the interval is over.
    e!.setVisible(true);
    await sim.sleep(100);
    // The app's own sync() meanwhile, then focus again: it joins the pull already set.
    await e!.sync();
    const from = pulls.length;
    e!.setVisible(true);
    await sim.sleep(12_000);
    // One pull in these 12 s (the one set by the first focus); an explicit sync() forgetting it set a second.
    expect(pulls.slice(from)).toHaveLength(1);
  });

  it('pullInterval 0: focus still pulls at once (there is no next pull to join), and a burst of triggers makes one', async () => {
    fifoLocks();
    const { sim, clock } = world(37);
    const s = await server({ seed: 2, time: sim.serverTime });
    const { fetch, pulls } = countingFetch(sim);
    const open = await tabs(sim, 2, 10, { baseUrl: s.url, fetch, clock, pullInterval: 0 });
    await open[0]!.sync();
    await sim.sleep(1000);
    const from = pulls.length;
    open[1]!.setVisible(true);
    open[1]!.setVisible(true);
    open[0]!.setVisible(true);
    await sim.sleep(1000);
    expect(pulls.slice(from)).toHaveLength(1);
  });
});
