// The decided rules of listening state (issue 18, "Decided details"), engine against the gPodder reference server
// over real HTTP: stamps and ties in whole seconds, `started` that never repeats an upload (mygpo drops repeats),
// an unknown total, played read from the newest play, and pulled actions that do not validate skipped and counted.
// The device clock is set by hand, a few seconds behind the server's: every stamp is in the server's past (mygpo
// lists nothing stamped later than its clock) and within a pull's overlap, and the second a change falls in is
// the test's to choose.
import { beforeEach, describe, expect, it } from 'vitest';
import type { EpisodeRef, Protocol, SyncOptions } from '../../src/types.ts';
import { systemClock } from '../../worker/clock.ts';
import type { SyncEngine } from '../../worker/index.ts';
import type { GpodderDialect, GpodderServer } from '../server/gpodder/types.ts';
import { episodeEngine, gpodderServer, naive } from './episode-helpers.ts';

const FEED = 'https://feeds.example/rules.xml';
const ref: EpisodeRef = { podcast: FEED, episode: 'https://media.example/rules-1.mp3', guid: 'rules-1' };
/** A whole second a little in the past (ms): each test's device time unless it moves it. */
let S = 0;
beforeEach(() => {
  S = Math.floor((Date.now() - 10_000) / 1000) * 1000;
});


async function gpodder(dialect: GpodderDialect): Promise<GpodderServer> {
  const s = await gpodderServer(dialect);
  if (dialect === 'mygpo') s.registerDevice('web-player');
  s.foreign.add([FEED], dialect === 'mygpo' ? { device: 'web-player' } : undefined);
  return s;
}

/** An engine whose wall clock reads `wall.now` (timers are the platform's). */
function engine(s: GpodderServer, wall = { now: S }, extra: Partial<SyncOptions> = {}, protocol: Exclude<Protocol, 'opa'> = 'gpodder'): SyncEngine {
  return episodeEngine(s, protocol, 'episode-rules', { clock: { ...systemClock, now: () => wall.now }, ...extra });
}

/** Another device's play, as its client uploads it. */
const foreign = (s: GpodderServer, timestamp: string, position: number, total?: number) =>
  s.foreign.actions([{ podcast: FEED, episode: ref.episode, guid: ref.guid, device: 'phone', action: 'play', timestamp, started: 0, position, ...(total === undefined ? {} : { total }) }]);

/** The play actions this engine uploaded, in order. */
const uploaded = (s: GpodderServer) =>
  s
    .log()
    .filter((r) => r.method === 'POST' && /episode/.test(r.path))
    .flatMap((r) => r.body as Record<string, unknown>[]);

describe('stamps: whole seconds; on equal stamps a pending local change wins, else the later in the answer', () => {
  it("another device's play a fraction of a second after a pending local change, in its second, does not win; the upload carries the local change's own second", async () => {
    const s = await gpodder('mygpo');
    const wall = { now: S + 300 };
    const e = engine(s, wall);
    await e.sync();
    await e.setProgress(ref, { position: 100, total: 3000 });
    // mygpo keeps the fraction (and writes it out): 0.4 s after the local change.
    foreign(s, `${naive(S)}.700000`, 900, 3000);
    await e.sync();
    expect(await e.episode(ref)).toMatchObject({ position: 100, pending: false });
    expect(uploaded(s)).toMatchObject([{ timestamp: naive(S), position: 100, total: 3000 }]);
    // Once both are on the server, every device reads the same answer and settles on the same value.
    await e.sync();
    const other = engine(s);
    await other.sync();
    expect((await other.episode(ref))?.position).toBe((await e.episode(ref))?.position);
  });

  it("a local change in the second of a value the episode holds is the listener's new change: it wins, stamped with its own second", async () => {
    const s = await gpodder('mygpo');
    foreign(s, naive(S), 900, 3000);
    const wall = { now: S + 500 };
    const e = engine(s, wall);
    await e.sync();
    expect(await e.episode(ref)).toMatchObject({ position: 900 });
    expect(await e.setProgress(ref, { position: 100 })).toMatchObject({ position: 100, total: 3000, pending: true });
    await e.sync();
    // Not moved a second past what the episode held: the time of the change on this device.
    expect(uploaded(s)).toMatchObject([{ timestamp: naive(S), position: 100 }]);
    expect(await e.episode(ref)).toMatchObject({ position: 100, pending: false });
    // Later in the answer than the other device's play of the same second: a new device reads the local one.
    const other = engine(s);
    await other.sync();
    expect(await other.episode(ref)).toMatchObject({ position: 100 });
  });

  it('a remote stamp in the future is taken as stamped: a local change before it does not replace it, and nothing is uploaded', async () => {
    const s = await gpodder('opodsync');
    const future = S + 3 * 3600_000;
    foreign(s, naive(future), 900, 3000);
    const e = engine(s);
    await e.sync();
    expect(await e.episode(ref)).toMatchObject({ position: 900, changedAt: new Date(future).toISOString() });
    expect(await e.setProgress(ref, { position: 100 })).toMatchObject({ position: 900, pending: false });
    await e.sync();
    expect(uploaded(s)).toEqual([]);
  });

  it('a queued change goes with its own second when the device clock then steps back and a later call adds a field (chaos gPodder seed 567)', async () => {
    const s = await gpodder('mygpo');
    const wall = { now: S };
    const e = engine(s, wall);
    await e.sync();
    s.failNext(1, 503, { method: 'POST', path: '/api/2/episodes/alice.json' });
    await e.setProgress(ref, { position: 100 });
    await e.sync().catch(() => undefined);
    // The clock steps back 5 s: the position (held from a later second) stays; the total, unknown, is taken.
    wall.now = S - 5000;
    expect(await e.setProgress(ref, { position: 200, total: 3000 })).toMatchObject({ position: 100, total: 3000, pending: true });
    await e.sync();
    // (The first upload was answered 503.)
    expect(uploaded(s).at(-1)).toMatchObject({ timestamp: naive(S), position: 100, total: 3000 });
  });

  it("two remote plays of one second: the later in the server's answer wins, whatever their values", async () => {
    const s = await gpodder('opodsync');
    foreign(s, naive(S), 900, 3000);
    foreign(s, naive(S), 100, 3000);
    const e = engine(s);
    await e.sync();
    expect(await e.episode(ref)).toMatchObject({ position: 100 });
  });
});

describe('`started` never repeats an earlier upload (mygpo drops an exact repeat of episode, device, action, started, position)', () => {
  it('played → unplayed → played → unplayed, each synced, ends as the last mark on mygpo', async () => {
    const s = await gpodder('mygpo');
    const e = engine(s);
    const other = engine(s);
    await e.setProgress(ref, { position: 10, total: 600 });
    await e.sync();
    for (const played of [true, false, true, false]) {
      await e.markPlayed(ref, played);
      await e.sync();
      await other.sync();
      expect(await other.episode(ref)).toMatchObject({ played, position: played ? 600 : 0 });
    }
    const mine = s.episodeLog().filter((a) => a.device === 'web-player');
    expect(mine).toHaveLength(5);
    expect(new Set(mine.map((a) => `${a.started},${a.position}`)).size).toBe(5);
  });
});

describe('an unknown total', () => {
  it('the upload omits it; setProgress without one keeps the last known; markPlayed without one rejects invalid', async () => {
    const s = await gpodder('opodsync');
    const e = engine(s);
    expect(await e.setProgress(ref, { position: 100 })).toMatchObject({ position: 100, played: false });
    await expect(e.markPlayed(ref)).rejects.toMatchObject({ code: 'invalid', message: expect.stringContaining('call setProgress with a total first') });
    await e.sync();
    expect(uploaded(s)).toHaveLength(1);
    expect(uploaded(s)[0]).not.toHaveProperty('total');
    // Another device reads a position and no length (nothing made up comes back as the episode's length).
    const other = engine(s);
    await other.sync();
    expect(await other.episode(ref)).toMatchObject({ position: 100, played: false });
    expect((await other.episode(ref))?.total).toBeUndefined();
    await e.setProgress(ref, { position: 200, total: 3000 });
    expect(await e.setProgress(ref, { position: 300 })).toMatchObject({ position: 300, total: 3000 });
    await e.sync();
    expect(uploaded(s).at(-1)).toMatchObject({ position: 300, total: 3000 });
  });

  it('-1 or a missing total from the server is unknown: the position counts, a known total stays', async () => {
    const s = await gpodder('opodsync');
    foreign(s, naive(S - 60_000), 50, 3000);
    const e = engine(s);
    await e.sync();
    foreign(s, naive(S - 30_000), 70, -1);
    foreign(s, naive(S - 20_000), 80);
    await e.sync();
    expect(await e.episode(ref)).toMatchObject({ position: 80, total: 3000, played: false });
    // A new device reads the whole history at once (reduced per episode): the newest total still comes with it.
    const other = engine(s);
    await other.sync();
    expect(await other.episode(ref)).toMatchObject({ position: 80, total: 3000, played: false });
  });
});

describe('played is read from the newest play', () => {
  it("a newer remote play short of the end un-plays, with a total or without one (the last known decides)", async () => {
    const s = await gpodder('opodsync');
    const wall = { now: S };
    const e = engine(s, wall);
    await e.setProgress(ref, { position: 10, total: 600 });
    await e.markPlayed(ref);
    await e.sync();
    foreign(s, naive(S + 1000), 200);
    await e.sync();
    expect(await e.episode(ref)).toMatchObject({ played: false, position: 200, total: 600 });
    foreign(s, naive(S + 2000), 600);
    await e.sync();
    expect(await e.episode(ref)).toMatchObject({ played: true, position: 600 });
    foreign(s, naive(S + 3000), 30, 600);
    await e.sync();
    expect(await e.episode(ref)).toMatchObject({ played: false, position: 30 });
  });

  it('a local setProgress is a play too: short of the end it un-plays (and says so on the wire), at the end it plays', async () => {
    const s = await gpodder('opodsync');
    const wall = { now: S };
    const e = engine(s, wall);
    await e.setProgress(ref, { position: 10, total: 600 });
    await e.markPlayed(ref);
    await e.sync();
    wall.now += 5000;
    expect(await e.setProgress(ref, { position: 100 })).toMatchObject({ played: false, position: 100 });
    await e.sync();
    expect(uploaded(s).at(-1)).toMatchObject({ position: 100, total: 600 });
    wall.now += 5000;
    expect(await e.setProgress(ref, { position: 600 })).toMatchObject({ played: true, position: 600 });
  });
});

describe('pulled actions that do not validate', () => {
  it('are skipped and counted in the report; the rest of the answer is applied', async () => {
    const s = await gpodder('opodsync');
    foreign(s, naive(S - 60_000), 120, 3000);
    const good = { podcast: FEED, episode: ref.episode, action: 'play', timestamp: naive(S - 30_000), started: 0, position: 240, total: 3000 };
    const garbage: unknown[] = [
      7,
      null,
      [good],
      { ...good, podcast: 42 },
      { ...good, episode: 'javascript:alert(1)' },
      { ...good, timestamp: 'yesterday' },
      { ...good, position: -1 },
      { ...good, position: -30 },
      { ...good, total: -5 },
      { ...good, action: 'download' },
    ];
    // The server's own answer, with another server's garbage added.
    const fetchImpl: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if ((init?.method ?? 'GET') !== 'GET' || !/episodes/.test(String(input))) return response;
      const body = (await response.json()) as { actions: unknown[]; timestamp: number };
      return Response.json({ ...body, actions: [...garbage, ...body.actions] });
    };
    const e = engine(s, { now: S }, { fetch: fetchImpl });
    const report = await e.sync();
    // Nine skipped (the download is another kind of action: not listening state, not counted).
    expect(report).toMatchObject({ episodesPulled: 1, episodesSkipped: 9 });
    expect(await e.episode(ref)).toMatchObject({ position: 120, total: 3000 });
  });
});
