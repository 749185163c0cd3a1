// A gPodder server whose clock was set back (issue 34), for each way a server answers what it stamped before the
// step ("ahead" of its clock now): an action log that lists it in every answer from before its stamp (`ahead:
// 'listed'`), mygpo's, which hides it (its source bounds every answer by its "now"), and opodsync's rows. Another
// device's remove after the step holds here, and nothing from before the step comes back; a step costs one
// listing per pull until the server's clock passes the newest time it gave before, then windows again.
import { afterEach, describe, expect, it } from 'vitest';
import { startGpodderServer } from '../server/gpodder/server.ts';
import { wallTime } from '../server/listen.ts';
import type { GpodderDialect, GpodderServer } from '../server/gpodder/types.ts';
import { createSyncEngine, type SyncEngine } from '../../worker/index.ts';
import { settle, uniqueDb } from './helpers.ts';

const feed = (n: number) => `https://feeds.example/show-${n}.xml`;
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close().catch(() => undefined);
});

/** A server whose clock moves a second per reading (no two events share a second) and that a test can step. */
async function gpodder(dialect: GpodderDialect, ahead: 'hidden' | 'listed', clock: { now: number }): Promise<GpodderServer> {
  const s = await startGpodderServer({ port: 0, dialect, ahead, time: { ...wallTime, now: () => (clock.now += 1000) } });
  open.push(s);
  if (dialect === 'mygpo') s.registerDevice('web-player');
  return s;
}

function engine(s: GpodderServer): SyncEngine {
  const e = createSyncEngine({
    protocol: 'gpodder',
    baseUrl: s.url,
    auth: { type: 'basic', username: 'alice', password: 'alice-password' },
    device: 'web-player',
    dbName: uniqueDb('gpodder-clock'),
    pullInterval: 0,
    pushDelay: 0,
    timeout: 2000,
    retry: { baseDelay: 10, maxDelay: 100 },
  });
  open.push(e);
  return e;
}

const subscribed = async (e: SyncEngine) => (await e.subscriptions({ subscribed: true })).map((x) => x.guid).sort();
const sinces = (s: GpodderServer) => s.log().filter((r) => r.method === 'GET' && r.path.includes('/subscriptions/')).map((r) => Number(r.query.since));

const kinds = [
  ['an action log listing what it stamped ahead', 'mygpo', 'listed'],
  ["mygpo's action log, hiding it", 'mygpo', 'hidden'],
  ["opodsync's rows", 'opodsync', 'hidden'],
] as const;

describe('a server whose clock was set back (issue 34)', () => {
  for (const [kind, dialect, ahead] of kinds) {
    it(`${kind}: removes by another device after the step hold here, and nothing stamped before it comes back`, async () => {
      const clock = { now: 1_700_000_000_000 };
      const s = await gpodder(dialect, ahead, clock);
      const e = engine(s);
      s.foreign.add([feed(1), feed(2), feed(3)]);
      await e.sync();
      clock.now += 600_000;
      s.foreign.add([feed(4)]);
      await e.sync();
      // Set back five minutes: feed 4's subscribe is ahead of the server's clock now.
      clock.now -= 300_000;
      // Another device removes feed 4 (its subscribe and this remove net to nothing in a listing), then feed 1.
      s.foreign.remove([feed(4)]);
      await e.sync();
      await settle(e);
      s.foreign.remove([feed(1)]);
      await e.sync();
      await e.sync();
      // (mygpo's hiding listing shows feed 4's remove, which is not ahead, and hides its subscribe: -1, a remove.)
      expect(await subscribed(e)).toEqual([feed(2), feed(3)]);
      expect(s.subscribed(dialect === 'mygpo' ? { device: 'web-player' } : {}).sort()).toEqual([feed(2), feed(3)]);
      expect(await e.pending()).toEqual([]);
    });
  }

  it('an action log listing what it stamped ahead: one listing per pull until its clock passes the old time, then windows', async () => {
    const clock = { now: 1_700_000_000_000 };
    const s = await gpodder('mygpo', 'listed', clock);
    const e = engine(s);
    s.foreign.add([feed(1), feed(2)]);
    await e.sync();
    clock.now -= 300_000;
    s.clearLog();
    await e.sync();
    // The step: the window answered from before the cursor, the listing, and the window after it (which lists the
    // old subscribes: this server's windows cannot be read until its clock passes them).
    expect(sinces(s).map((x) => (x === 0 ? 0 : 'window'))).toEqual(['window', 0, 'window']);
    for (let i = 0; i < 3; i++) {
      s.clearLog();
      await e.sync();
      expect(sinces(s)).toEqual([0]);
    }
    clock.now += 400_000;
    await e.sync();
    s.clearLog();
    s.foreign.add([feed(3)]);
    await e.sync();
    expect(sinces(s)).toHaveLength(1);
    expect(sinces(s)[0]).toBeGreaterThan(1_700_000_000);
    expect(await subscribed(e)).toEqual([feed(1), feed(2), feed(3)]);
  });
  // gPodder chaos seed 820: while the clock is back, it passes again what was stamped before the step. mygpo nets a
  // window by stamps, so a window from after the step holds the old subscribe and not the remove made since (the
  // remove's stamp is before the window): read as it is, the feed would come back.
  for (const how of ["another device's remove", "this device's move"] as const) {
    it(`mygpo, hiding what it stamped ahead: ${how} after the step holds once the clock passes the old subscribe again`, async () => {
      const clock = { now: 1_700_000_000_000 };
      const s = await gpodder('mygpo', 'hidden', clock);
      const e = engine(s);
      s.foreign.add([feed(1), feed(2)]);
      await e.sync();
      clock.now += 600_000;
      // Subscribed at T, then the server gives later times (up to T + 2 min) before its clock goes back 5 min.
      if (how === "this device's move") await e.add(feed(4));
      else s.foreign.add([feed(4)]);
      await e.sync();
      clock.now += 120_000;
      await e.sync();
      clock.now -= 300_000;
      if (how === "this device's move") await e.update(feed(4), { feedUrl: feed(5) });
      else s.foreign.remove([feed(4)]);
      await e.sync();
      await settle(e);
      // The clock passes T again, not yet T + 2 min: a window from after the step holds the subscribe at T alone.
      clock.now += 200_000;
      await e.sync();
      await e.sync();
      const mine = s.subscribed({ device: 'web-player' }).sort();
      expect(mine).toEqual(how === "this device's move" ? [feed(1), feed(2), feed(5)] : [feed(1), feed(2)]);
      expect(await subscribed(e)).toEqual(mine);
      expect(await e.pending()).toEqual([]);
    });
  }
});
