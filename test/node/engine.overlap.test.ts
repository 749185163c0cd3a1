// The pull's overlap before the cursor: a fixed time when the newest entries are sparse, the newest entries
// (not every page of the last seconds) when they are dense, as after a bulk import.
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../worker/clock.ts';
import { engine, requests, server } from './helpers.ts';

const changedAt = (v: { subscription_changed?: string }) => Date.parse(v.subscription_changed!);

describe('pull overlap', () => {
  it('after a bulk import, a pull with nothing new re-reads the newest entries in one request', async () => {
    // Seeded entries are 1 ms apart: the last 2 s of them fill several pages.
    const s = await server({ seed: 3000 });
    // No drain takes any time on this clock: how far the cursor is held back (by the drain's length) must not
    // depend on how loaded the machine is (under load the drain took seconds and the next pull re-read a page more).
    const e = engine(s, { pageSize: 500, clock: { ...systemClock, monotonic: () => 0 } });
    await e.sync();
    await e.sync();
    s.clearLog();
    const report = await e.sync();
    const lists = requests(s, 'GET', '/subscriptions');
    expect(lists).toHaveLength(1);
    expect(report.pulled).toBe(0);
    const since = Date.parse(lists[0]!.query.since!);
    const newest = s.state().map(changedAt).sort((a, b) => b - a);
    // At least the newest 100 entries are read again (commits that land out of timestamp order).
    expect(since).toBeLessThan(newest[99]!);
    expect(since).toBeGreaterThan(newest[0]! - 2000);
  });

  it('a change among a dense tail is still pulled', async () => {
    const s = await server({ seed: 3000 });
    const e = engine(s, { pageSize: 500 });
    await e.sync();
    const target = s.state()[10]!;
    s.foreign.patch(target.guid, { is_subscribed: !target.is_subscribed });
    await e.sync();
    expect((await e.subscription(target.guid))?.isSubscribed).toBe(!target.is_subscribed);
  });

  it('whole-second timestamps keep a second of overlap', async () => {
    const s = await server({ seed: 300 });
    // A server that keeps whole seconds: every timestamp it lists is truncated.
    const e = engine(s, {
      pageSize: 500,
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        if (!String(input).includes('/subscriptions') || init?.method !== undefined && init.method !== 'GET') return response;
        const body = (await response.json()) as { subscriptions?: { subscription_changed?: string }[] };
        for (const sub of body.subscriptions ?? []) {
          if (sub.subscription_changed) sub.subscription_changed = new Date(Math.floor(Date.parse(sub.subscription_changed) / 1000) * 1000).toISOString();
        }
        return new Response(JSON.stringify(body), { status: response.status, headers: response.headers });
      },
    });
    await e.sync();
    const cursor = Date.parse((await e.status()).cursor!);
    s.clearLog();
    await e.sync();
    const since = Date.parse(requests(s, 'GET', '/subscriptions')[0]!.query.since!);
    expect(since).toBeLessThan(Math.floor(cursor / 1000) * 1000);
  });
});
