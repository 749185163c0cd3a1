// Leadership without Web Locks (an election over BroadcastChannel) measures a silent leader's lease in elapsed
// time (issue 25): a device clock stepped back an hour must not keep a follower waiting an hour for a leader
// that is gone.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { acquireLeadership, type Leadership } from '../../worker/leader.ts';

const g = globalThis as { document?: unknown };
let cleanup: (() => void)[] = [];
afterEach(() => {
  for (const fn of cleanup) fn();
  cleanup = [];
  vi.useRealTimers();
});

describe('election over BroadcastChannel', () => {
  it('a follower takes over once a leader falls silent, after the wall clock stepped back an hour', async () => {
    // A browser page without Web Locks (Node has no navigator.locks).
    g.document = {};
    cleanup.push(() => delete g.document);
    const name = `lease-${Math.random().toString(36).slice(2)}`;
    // Another tab leads (the lowest id): it answers a claim and says it is alive every 500 ms, then dies without resigning.
    const other = new BroadcastChannel(`opa-sync-leader:${name}`);
    let alive = true;
    const beat = () => alive && other.postMessage({ type: 'heartbeat', id: '0' });
    other.onmessage = (event: MessageEvent<{ type: string }>) => void (event.data.type === 'claim' && beat());
    const heartbeats = setInterval(beat, 500);
    cleanup.push(() => (clearInterval(heartbeats), other.close()));
    let led = false;
    const me: Leadership = acquireLeadership(name, () => (led = true));
    cleanup.push(() => me.release());
    await new Promise((r) => setTimeout(r, 1_500));
    expect(led).toBe(false);
    // Only the wall clock is faked: timers and performance.now() run on.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() - 3_600_000 });
    alive = false;
    // Measured on performance.now(): the faked Date stands still. The lease is 3.5 s.
    const start = performance.now();
    while (!led && performance.now() - start < 10_000) await new Promise((r) => setTimeout(r, 50));
    expect(led).toBe(true);
    expect(me.isLeader).toBe(true);
  }, 20_000);
});
