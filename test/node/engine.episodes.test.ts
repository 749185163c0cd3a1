// Listening state against the gPodder reference server in each dialect: mygpo (a log with 1,000-action pages
// whose timestamp is the last action's), the Nextcloud app (one row per episode, `PLAY` upper-case, strict
// since), opodsync (append-only). Another device's actions go in through the server's foreign hook.
import { describe, expect, it } from 'vitest';
import type { Protocol } from '../../src/types.ts';
import type { SyncEngine } from '../../worker/index.ts';
import type { GpodderDialect, GpodderServer } from '../server/gpodder/types.ts';
import { DAY_AGO, episodeEngine, feed, gpodderServer, media, naive } from './episode-helpers.ts';




const engine = (s: GpodderServer, protocol: Exclude<Protocol, 'opa'>): SyncEngine => episodeEngine(s, protocol, 'episodes');
const gpodder = gpodderServer;

/** Subscribe feeds 0..n-1 where the engine reads its list (mygpo over v2 paths: this device's list). */
function subscribe(s: GpodderServer, n: number, protocol: Exclude<Protocol, 'opa'>): void {
  const perDevice = s.dialect === 'mygpo' && protocol === 'gpodder';
  if (perDevice) s.registerDevice('web-player');
  s.foreign.add(Array.from({ length: n }, (_, i) => feed(i)), perDevice ? { device: 'web-player' } : undefined);
}

const episodeRequests = (s: GpodderServer, method: string) => s.log().filter((r) => r.method === method && /episode/.test(r.path));

const cases: [GpodderDialect, Exclude<Protocol, 'opa'>][] = [
  ['mygpo', 'gpodder'],
  ['opodsync', 'gpodder'],
  ['mygpo', 'nextcloud'],
  ['opodsync', 'nextcloud'],
];

describe.each(cases)('listening state, %s dialect over %s paths', (dialect, protocol) => {
  it("another device's plays come down: a position, played at the end, unplayed at 0, matched by guid", async () => {
    const s = await gpodder(dialect);
    subscribe(s, 3, protocol);
    s.foreign.actions([
      { podcast: feed(0), episode: media('0?t=1'), guid: 'g0', device: 'phone', action: 'play', timestamp: naive(DAY_AGO), started: 0, position: 600, total: 3000 },
      { podcast: feed(1), episode: media(1), device: 'phone', action: 'play', timestamp: naive(DAY_AGO), started: 0, position: 1800, total: 1800 },
      { podcast: feed(2), episode: media(2), device: 'phone', action: 'play', timestamp: naive(DAY_AGO - 60_000), started: 0, position: 1200, total: 1200 },
      { podcast: feed(2), episode: media(2), device: 'phone', action: 'play', timestamp: naive(DAY_AGO), started: 0, position: 0, total: 1200 },
    ]);
    const e = engine(s, protocol);
    await e.sync();
    expect(await e.episode({ podcast: feed(0), episode: media('0?t=2'), guid: 'g0' })).toMatchObject({ position: 600, total: 3000, played: false, pending: false });
    expect(await e.episode({ podcast: feed(1), episode: media(1) })).toMatchObject({ played: true, pending: false });
    expect(await e.episode({ podcast: feed(2), episode: media(2) })).toMatchObject({ position: 0, played: false });
    // Nothing was uploaded: the engine never sends what the listener did not change.
    expect(episodeRequests(s, 'POST')).toHaveLength(0);
  });

  it('1,000 progress changes made offline over 50 episodes go as one upload of 50 actions', async () => {
    const s = await gpodder(dialect);
    subscribe(s, 5, protocol);
    const e = engine(s, protocol);
    await e.sync();
    e.setOnline(false);
    for (let i = 0; i < 1000; i++) {
      const n = i % 50;
      await e.setProgress({ podcast: feed(n % 5), episode: media(`${n}`), guid: `ep-${n}` }, { position: 10 + i, total: 5000 });
    }
    expect((await e.status()).pendingEpisodes).toBe(50);
    e.setOnline(true);
    const report = await e.sync();
    expect(report.episodesPushed).toBe(50);
    const posts = episodeRequests(s, 'POST');
    expect(posts).toHaveLength(1);
    const log = s.episodeLog(protocol === 'nextcloud' && dialect === 'mygpo' ? { family: 'nextcloud' } : {}).filter((a) => a.device === 'web-player' || protocol === 'nextcloud');
    expect(log).toHaveLength(50);
    // Each carries the last position of its episode (mygpo keeps no guid it was sent: found by URL).
    expect(log.find((a) => a.episode === media(49))).toMatchObject({ position: 10 + 999 });
    expect((await e.status()).pendingEpisodes).toBe(0);
  });
});

describe('mygpo pages of 1,000 actions', () => {
  it('are followed while full, and the newest action per episode wins', async () => {
    const s = await gpodder('mygpo');
    subscribe(s, 1, 'gpodder');
    const actions = Array.from({ length: 2500 }, (_, i) => ({
      podcast: feed(0),
      episode: media(i % 100),
      device: 'phone',
      action: 'play',
      timestamp: naive(DAY_AGO - (2500 - i) * 1000),
      started: 0,
      position: i,
      total: 5000,
    }));
    // In uploads of 100 (mygpo takes bigger ones in the background).
    for (let i = 0; i < actions.length; i += 100) s.foreign.actions(actions.slice(i, i + 100));
    const e = engine(s, 'gpodder');
    await e.sync();
    expect(episodeRequests(s, 'GET').length).toBeGreaterThanOrEqual(3);
    const states = await e.episodes({ podcast: feed(0) });
    expect(states).toHaveLength(100);
    expect(states.find((x) => x.episode === media(99))).toMatchObject({ position: 2499 });
  });
});

describe('the Nextcloud app', () => {
  it('answers PLAY in upper case and keeps one row per episode; both read as plays', async () => {
    const s = await gpodder('mygpo');
    subscribe(s, 1, 'nextcloud');
    const e = engine(s, 'nextcloud');
    await e.sync();
    await e.setProgress({ podcast: feed(0), episode: media('nc'), guid: 'nc-1' }, { position: 10, total: 1200 });
    await e.markPlayed({ podcast: feed(0), episode: media('nc'), guid: 'nc-1' });
    await e.sync();
    const rows = s.episodeLog({ family: 'nextcloud' });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ action: 'PLAY', guid: 'nc-1' });
    expect(rows[0]!.position).toBe(rows[0]!.total);
    // A second engine (another browser) reads the upper-case action back.
    const other = engine(s, 'nextcloud');
    await other.sync();
    expect(await other.episode({ podcast: feed(0), episode: media('nc'), guid: 'nc-1' })).toMatchObject({ played: true, pending: false });
  });
});

describe('clear()', () => {
  it('names the episodes it wiped in its change event (a store of that podcast re-reads them)', async () => {
    const s = await gpodder('opodsync');
    subscribe(s, 1, 'gpodder');
    const e = engine(s, 'gpodder');
    const ref = { podcast: feed(0), episode: media('wiped'), guid: 'wiped-1' };
    await e.setProgress(ref, { position: 42 });
    const named: string[] = [];
    e.on('change', (event) => named.push(...(event.episodes ?? []).map((r) => r.guid ?? r.episode)));
    await e.clear();
    expect(named).toContain('wiped-1');
    expect(await e.episode(ref)).toBeUndefined();
  });
});

describe('values', () => {
  it('whole seconds, a position past the length clamped, played at the end, unplayed at 0, a repeated mark a no-op; checks in order', async () => {
    const s = await gpodder('opodsync');
    subscribe(s, 1, 'gpodder');
    const e = engine(s, 'gpodder');
    const ref = { podcast: feed(0), episode: media('values') };
    await expect(e.markPlayed(ref)).rejects.toMatchObject({ code: 'invalid' });
    expect(await e.setProgress(ref, { position: 12.6, total: 99.4 })).toMatchObject({ position: 13, total: 99 });
    expect(await e.setProgress(ref, { position: 500 })).toMatchObject({ position: 99, total: 99 });
    expect(await e.markPlayed(ref)).toMatchObject({ played: true, position: 99 });
    await e.sync();
    const uploads = () => s.log().filter((r) => r.method === 'POST' && /episodes/.test(r.path)).length;
    const before = uploads();
    // Marking what already holds queues nothing.
    expect(await e.markPlayed(ref)).toMatchObject({ played: true, pending: false });
    await e.sync();
    expect(uploads()).toBe(before);
    expect(await e.markPlayed(ref, false)).toMatchObject({ played: false, position: 0, pending: true });
    await expect(e.setProgress(ref, { position: -1 })).rejects.toMatchObject({ code: 'invalid' });
    await e.close();
    // closed before invalid; an OPA engine answers unsupported before either.
    await expect(e.setProgress(ref, { position: -1 })).rejects.toMatchObject({ code: 'closed' });
  });
});

describe('over the Open Podcast API', () => {
  it('every episode method rejects with unsupported first (before closed or invalid), queuing nothing', async () => {
    const { engine: opaEngine, server: opaServer } = await import('./helpers.ts');
    const s = await opaServer({ seed: 1 });
    const e = opaEngine(s);
    const bad = { podcast: 'javascript:x', episode: '' };
    await expect(e.setProgress(bad, { position: -1 })).rejects.toMatchObject({ code: 'unsupported' });
    await expect(e.markPlayed(bad)).rejects.toMatchObject({ code: 'unsupported' });
    await expect(e.episode(bad)).rejects.toMatchObject({ code: 'unsupported' });
    await expect(e.episodes()).rejects.toMatchObject({ code: 'unsupported' });
    expect((await e.status()).pendingEpisodes).toBe(0);
    await e.close();
    await expect(e.setProgress(bad, { position: -1 })).rejects.toMatchObject({ code: 'unsupported' });
  });
});
