import { describe, expect, it } from 'vitest';
import { serverPerFile } from './server-fixture.ts';
import { createClock } from '../server/clock.ts';
import { startServer, type WirePostResult } from '../server/server.ts';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const ctx = serverPerFile();

const strictlyIncreasing = (stamps: string[]) => stamps.every((s, i) => i === 0 || Date.parse(s) > Date.parse(stamps[i - 1]));

describe('ctx.server clock', () => {
  it('never repeats a reading while the wall clock stands still, and follows it when it moves', () => {
    let wall = 1_000;
    const clock = createClock(() => wall);
    expect([clock.tick(), clock.tick(), clock.tick()]).toEqual([1_000, 1_001, 1_002]);
    wall = 5_000;
    expect(clock.tick()).toBe(5_000);
    wall = 4_000; // the wall clock stepping back never takes the ctx.server clock with it
    expect(clock.tick()).toBe(5_001);
  });

  it('back-dates a bulk reservation to end at now, but never below the last reading', () => {
    let wall = 10_000;
    const clock = createClock(() => wall);
    expect(clock.reserve(100)).toBe(9_901);
    expect(clock.tick()).toBe(10_001);
    expect(clock.reserve(5)).toBe(10_002);
    wall = 20_000;
    expect(clock.tick()).toBe(20_000);
  });

  it('stamps many writes of one request with distinct, increasing ISO times with milliseconds', async () => {
    const feeds = Array.from({ length: 200 }, (_, i) => ({ feed_url: `https://f${i}.example/feed.xml` }));
    const res = await ctx.api<WirePostResult>('POST', '/subscriptions', { body: { subscriptions: feeds } });
    const stamps = res.body.success.map((s) => s.subscription_changed);
    expect(stamps).toHaveLength(200);
    expect(stamps.every((s) => ISO_MS.test(s))).toBe(true);
    expect(strictlyIncreasing(stamps)).toBe(true);
  });

  it('keeps increasing across seeding, other-device writes and HTTP writes', async () => {
    const seeded = ctx.server.seed(500).map((s) => s.subscription_changed!);
    const foreign = Array.from({ length: 50 }, (_, i) => ctx.server.foreign.add(`https://x${i}.example/`).subscription_changed!);
    const patched = (await ctx.api<{ subscription_changed: string }>('PATCH', `/subscriptions/${ctx.server.state()[0].guid}`, {
      body: { is_subscribed: !ctx.server.state()[0].is_subscribed },
    })).body.subscription_changed;
    const all = [...seeded, ...foreign, patched];
    expect(strictlyIncreasing(all)).toBe(true);
  });

  it('back-dates seed data on a fresh ctx.server rather than pushing the clock into the future', async () => {
    const fresh = await startServer({ port: 0 });
    try {
      const stamps = fresh.seed(5_000).map((s) => Date.parse(s.subscription_changed!));
      expect(stamps[stamps.length - 1]).toBeLessThanOrEqual(Date.now());
      expect(stamps[stamps.length - 1] - stamps[0]).toBe(4_999);
    } finally {
      await fresh.close();
    }
  });
});
