// What a gPodder server answers of changes it stamped before its clock was set back (issue 34): the reference
// server models an action log that hides them (mygpo's source bounds every answer by its "now"), one that lists
// them in every answer from before their stamp (`ahead: 'listed'`), and opodsync's rows (a row says its state).
import { describe, expect, it } from 'vitest';
import type { GpodderFixture } from './server-fixture.ts';
import { GPODDER_EPOCH_MS, gpodderServerPerFile } from './server-fixture.ts';
import type { WireChanges } from '../server/gpodder/server.ts';

const T0 = GPODDER_EPOCH_MS / 1000;
const F = 'https://f.example/feed.xml';
const G = 'https://g.example/feed.xml';

/** F and G added at T0+100 by one device, the clock set back an hour, then another change to F (`after`). */
async function stepped(ctx: GpodderFixture, after: 'remove' | 'none') {
  const subs = '/api/2/subscriptions/alice/web.json';
  await ctx.api('POST', '/api/2/devices/alice/web.json', { body: {} });
  ctx.clock.ms = GPODDER_EPOCH_MS + 100_000;
  await ctx.api('POST', subs, { body: { add: [F, G] } });
  ctx.clock.ms = GPODDER_EPOCH_MS + 100_000 - 3_600_000;
  if (after === 'remove') await ctx.api('POST', subs, { body: { remove: [F] } });
  ctx.clock.ms += 1000;
  const pull = async (since: number) => (await ctx.api<WireChanges>('GET', `${subs}?since=${since}`)).body;
  return { pull, now: T0 + 100 - 3600 + 1 };
}

describe("mygpo's action log, hiding what it stamped ahead (the default)", () => {
  const ctx = gpodderServerPerFile();
  it('a window from before the step holds only what was stamped up to now; the full listing hides the adds stamped ahead', async () => {
    const { pull, now } = await stepped(ctx, 'remove');
    expect(await pull(now - 10)).toMatchObject({ add: [], remove: [F], timestamp: now });
    expect(await pull(0)).toMatchObject({ add: [], remove: [F] });
    expect(await pull(now)).toMatchObject({ add: [], remove: [] });
  });
});

describe("an action log listing what it stamped ahead (ahead: 'listed')", () => {
  const ctx = gpodderServerPerFile({ ahead: 'listed' });
  it('every window from before the old stamps holds them: the listing nets them with the remove, a window after it shows the old add', async () => {
    const { pull, now } = await stepped(ctx, 'remove');
    // The full listing nets F's add and remove: only G.
    expect(await pull(0)).toMatchObject({ add: [G], remove: [], timestamp: now });
    // A window from the listing's time: the old adds again (F's remove is before it).
    expect(await pull(now)).toMatchObject({ add: [F, G], remove: [] });
    // A window from before the remove: F's add and remove cancel out; G's add is there.
    expect(await pull(now - 10)).toMatchObject({ add: [G], remove: [] });
  });

  it('once the clock passes the old stamps, windows hold only what was stamped since', async () => {
    const { pull } = await stepped(ctx, 'none');
    ctx.clock.ms = GPODDER_EPOCH_MS + 200_000;
    expect(await pull(T0 + 150)).toMatchObject({ add: [], remove: [] });
  });
});

describe("opodsync's rows", () => {
  const ctx = gpodderServerPerFile({ dialect: 'opodsync' });
  it('a row stamped ahead is in every window from before its stamp, with its current state', async () => {
    const { pull, now } = await stepped(ctx, 'remove');
    expect(await pull(now)).toMatchObject({ add: [G], remove: [] });
    expect(await pull(now - 10)).toMatchObject({ add: [G], remove: [F] });
    expect(await pull(0)).toMatchObject({ add: [G], remove: [F] });
  });
});
