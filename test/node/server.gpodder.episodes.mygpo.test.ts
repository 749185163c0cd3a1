// Episode actions on the gPodder reference server's default dialect, as gpodder.net (mygpo) keeps them.
import { describe, expect, it } from 'vitest';
import { GPODDER_EPOCH_MS, gpodderServerPerFile } from './server-fixture.ts';
import type { WireEpisodeActions, WireEpisodeUploadResult } from '../server/gpodder/server.ts';

const ctx = gpodderServerPerFile();
const T0 = GPODDER_EPOCH_MS / 1000;
const EP = '/api/2/episodes/alice.json';
const F = 'https://feed.example/rss';
const ep = (n: number) => `https://feed.example/${n}.mp3`;
/** A naive UTC time `s` seconds after T0. */
const at = (s: number) => new Date((T0 + s) * 1000).toISOString().slice(0, 19);
const play = (n: number, s: number, position: number, extra: Record<string, unknown> = {}) => ({
  podcast: F, episode: ep(n), action: 'play', timestamp: at(s), started: 0, position, total: 600, ...extra,
});
const push = (body: unknown) => ctx.api<WireEpisodeUploadResult>('POST', EP, { body });
const pull = (query = '') => ctx.api<WireEpisodeActions>('GET', `${EP}${query}`);

describe('upload', () => {
  it('stores each action, answers the server time and the sanitised URLs in update_urls', async () => {
    ctx.clock.ms += 60_000;
    const res = await push([play(1, 10, 30, { device: 'phone', guid: 'ignored' }), { ...play(2, 20, 40), podcast: 'HTTPS://Feed.example/rss' }]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ timestamp: T0 + 60, update_urls: [['HTTPS://Feed.example/rss', F]] });
    expect(ctx.server.episodeLog()).toEqual([
      { podcast: F, episode: ep(1), action: 'play', timestamp: T0 + 10, uploaded: T0 + 60, device: 'phone', started: 0, position: 30, total: 600 },
      { podcast: F, episode: ep(2), action: 'play', timestamp: T0 + 20, uploaded: T0 + 60, started: 0, position: 40, total: 600 },
    ]);
    // An unknown device in an action is created, as mygpo's get_device does.
    expect(ctx.server.devices().map((d) => d.id)).toEqual(['phone']);
  });

  it('drops an exact repeat of (episode, device, action, started, position) whatever its time', async () => {
    ctx.clock.ms += 100_000;
    await push([play(1, 10, 30), play(1, 50, 30), play(1, 60, 30, { started: 1 }), play(1, 70, 30, { device: 'phone' })]);
    expect(ctx.server.episodeLog().map((a) => a.timestamp - T0)).toEqual([10, 60, 70]);
  });

  it('skips an action whose URL sanitises to nothing (reported as ""), and fails on an unknown action type with the earlier ones kept', async () => {
    const skipped = await push([{ ...play(1, 1, 1), episode: 'nothing' }]);
    expect(skipped.status).toBe(200);
    expect(skipped.body.update_urls).toEqual([['nothing', '']]);
    ctx.clock.ms += 10_000;
    const bad = await push([play(2, 2, 2), { ...play(3, 3, 3), action: 'listen' }, play(4, 4, 4)]);
    expect(bad.status).toBe(500);
    expect(ctx.server.episodeLog().map((a) => a.episode)).toEqual([ep(2)]);
  });

  it('refuses a body that is not JSON (400) and crashes on a bad timestamp or number (500)', async () => {
    const res = await ctx.api('POST', EP, { raw: '[{' });
    expect(res.status).toBe(400);
    expect(res.text).toBe('Could not decode episode update POST data for user alice: [{');
    expect((await push([play(1, 1, 1, { timestamp: 'soon' })])).status).toBe(500);
    expect((await push([play(1, 1, 1, { position: 'ten' })])).status).toBe(500);
    expect((await push([play(1, 1, 1, { device: 'bad id' })])).status).toBe(400);
    expect(ctx.server.episodeLog()).toEqual([]);
  });

  it('takes naive (UTC), Z, offset and fractional timestamps; no timestamp is the upload time', async () => {
    ctx.clock.ms += 500_000;
    await push([
      play(1, 0, 1, { timestamp: '2023-01-02T03:04:05' }),
      play(2, 0, 1, { timestamp: '2023-01-02T03:04:05Z' }),
      play(3, 0, 1, { timestamp: '2023-01-02T05:04:05+02:00' }),
      play(4, 0, 1, { timestamp: '2023-01-02T03:04:05.250' }),
      play(5, 0, 1, { timestamp: undefined }),
    ]);
    const stamps = (await pull()).body.actions.map((a) => a.timestamp);
    expect(stamps).toEqual(['2023-01-02T03:04:05', '2023-01-02T03:04:05', '2023-01-02T03:04:05', '2023-01-02T03:04:05.250000']);
    expect(ctx.server.episodeLog()[4].timestamp).toBe(T0 + 500);
  });

  it('over 100 actions go to the background: an answer at once with no update_urls, everything stored', async () => {
    ctx.clock.ms += 1_000_000;
    const actions = Array.from({ length: 150 }, (_, i) => ({ ...play(i, i, 5), podcast: 'HTTPS://Feed.example/rss' }));
    const res = await push(actions);
    expect(res.body).toEqual({ timestamp: T0 + 1000, update_urls: [] });
    expect(ctx.server.episodeLog()).toHaveLength(150);
  });
});

describe('pull', () => {
  it('filters on the action time, since inclusive, before now; oldest first; timestamp = the last returned action', async () => {
    ctx.clock.ms += 100_000;
    await push([play(1, 30, 1), play(2, 10, 2), play(3, 20, 3), play(4, 100, 4), play(5, 200, 5)]);
    const all = await pull('?since=0');
    expect(all.headers.get('access-control-allow-origin')).toBe('*');
    // The action stamped at now (T0+100) and the future one are left for a later pull.
    expect(all.body.actions.map((a) => a.episode)).toEqual([ep(2), ep(3), ep(1)]);
    expect(all.body.timestamp).toBe(T0 + 30);
    expect((await pull(`?since=${T0 + 20}`)).body.actions.map((a) => a.episode)).toEqual([ep(3), ep(1)]);
    ctx.clock.ms += 1;
    expect((await pull(`?since=${T0 + 31}`)).body).toMatchObject({ actions: [{ episode: ep(4) }], timestamp: T0 + 100 });
    expect((await pull(`?since=${T0 + 101}`)).body).toEqual({ actions: [], timestamp: T0 + 100 });
  });

  it('writes mygpo fields: naive time, device, guid of the feed episode (null when unknown), positions for play only', async () => {
    ctx.clock.ms += 100_000;
    const known = ctx.server.feedEpisodes(F)[0];
    await push([
      { podcast: F, episode: known.url, action: 'play', timestamp: at(1), started: 0, position: 10, total: known.duration, device: 'phone' },
      { podcast: F, episode: ep(9), action: 'download', timestamp: at(2), position: 5 },
      { podcast: F, episode: ep(8), action: 'play', timestamp: at(3) },
    ]);
    expect((await pull()).body.actions).toEqual([
      { podcast: F, episode: known.url, guid: known.guid, action: 'play', timestamp: at(1), device: 'phone', started: 0, position: 10, total: known.duration },
      { podcast: F, episode: ep(9), guid: null, action: 'download', timestamp: at(2) },
      { podcast: F, episode: ep(8), guid: null, action: 'play', timestamp: at(3), started: null, position: null, total: null },
    ]);
  });

  it('answers at most 1,000 actions; the next page starts at the last one (inclusive), so the boundary repeats', async () => {
    ctx.clock.ms += 10_000_000;
    ctx.server.foreign.actions(Array.from({ length: 1200 }, (_, i) => play(i, i, i)));
    const first = await pull('?since=0');
    expect(first.body.actions).toHaveLength(1000);
    expect(first.body.timestamp).toBe(T0 + 999);
    const second = await pull(`?since=${first.body.timestamp}`);
    expect(second.body.actions).toHaveLength(201);
    expect(second.body.actions[0].episode).toBe(ep(999));
  });

  it('podcast= and device= filter; an unknown one is a 404; since must be an integer; aggregated keeps the last per episode', async () => {
    ctx.clock.ms += 100_000;
    await push([play(1, 1, 1, { device: 'phone' }), { ...play(2, 2, 2), podcast: 'https://other.example/rss' }, play(1, 3, 3)]);
    expect((await pull(`?podcast=${encodeURIComponent(F)}`)).body.actions.map((a) => a.position)).toEqual([1, 3]);
    expect((await pull('?device=phone')).body.actions.map((a) => a.position)).toEqual([1]);
    expect((await pull(`?podcast=${encodeURIComponent('https://never.example/rss')}`)).status).toBe(404);
    expect((await pull('?device=tablet')).status).toBe(404);
    expect((await pull('?since=1.5')).status).toBe(400);
    expect((await pull('?since=abc')).text).toBe('since-value is not a valid timestamp');
    expect((await pull('?aggregated=true')).body.actions.map((a) => a.position)).toEqual([3, 2]);
  });

  it('routes only /api/2/episodes/{user}.json, GET and POST, for the logged-in user', async () => {
    expect((await ctx.api('GET', '/api/2/episodes/alice/phone.json')).status).toBe(404);
    expect((await ctx.api('PUT', EP, { body: [] })).status).toBe(405);
    expect((await ctx.api('GET', '/api/2/episodes/bob.json')).status).toBe(401);
    expect((await ctx.api('GET', EP, { auth: null })).status).toBe(401);
  });
});

describe('another client (admin)', () => {
  it('plants actions with a chosen old time: a plain since misses the late upload, since=0 finds it', async () => {
    ctx.clock.ms += 1_000_000;
    await push([play(1, 900, 10)]);
    const cursor = (await pull('?since=0')).body.timestamp;
    ctx.clock.ms += 60_000;
    const res = await fetch(`${ctx.server.url}/__admin/episodes`, {
      method: 'POST',
      body: JSON.stringify({ actions: [play(2, 500, 20, { device: 'laptop' })] }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ timestamp: T0 + 1060, update_urls: [] });
    expect((await pull(`?since=${cursor}`)).body.actions.map((a) => a.episode)).toEqual([ep(1)]);
    expect((await pull('?since=0')).body.actions.map((a) => a.episode)).toEqual([ep(2), ep(1)]);
    const log = (await (await fetch(`${ctx.server.url}/__admin/episode-log`)).json()) as { uploaded: number; timestamp: number }[];
    expect(log.map((a) => [a.timestamp - T0, a.uploaded - T0])).toEqual([[900, 1000], [500, 1060]]);
  });

  it('refuses a planted action as the upload would', async () => {
    const res = await fetch(`${ctx.server.url}/__admin/episodes`, { method: 'POST', body: JSON.stringify({ actions: [{ ...play(1, 1, 1), action: 'x' }] }) });
    expect(res.status).toBe(500);
    expect((await fetch(`${ctx.server.url}/__admin/episodes`, { method: 'POST', body: '{}' })).status).toBe(400);
  });
});
