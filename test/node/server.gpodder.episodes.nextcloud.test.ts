// Episode actions on the Nextcloud paths of the default dialect, as the gPodder Sync app (3.15.2) keeps them.
import { describe, expect, it } from 'vitest';
import { GPODDER_EPOCH_MS, gpodderServerPerFile } from './server-fixture.ts';
import { NEXTCLOUD_BASE, type WireEpisodeActions, type WireEpisodeUploadResult } from '../server/gpodder/server.ts';

const ctx = gpodderServerPerFile();
const T0 = GPODDER_EPOCH_MS / 1000;
const F = 'https://feed.example/rss';
const ep = (n: number) => `https://feed.example/${n}.mp3`;
const at = (s: number) => new Date((T0 + s) * 1000).toISOString().slice(0, 19);
const play = (n: number, s: number, position: number, extra: Record<string, unknown> = {}) => ({
  podcast: F, episode: ep(n), action: 'play', timestamp: at(s), started: 0, position, total: 600, ...extra,
});
const push = (body: unknown) => ctx.api<WireEpisodeUploadResult>('POST', `${NEXTCLOUD_BASE}/episode_action/create`, { body });
const pull = (query = '') => ctx.api<WireEpisodeActions>('GET', `${NEXTCLOUD_BASE}/episode_action${query}`);

describe('the gPodder Sync app', () => {
  it('keeps one row per episode: the last upload wins whatever its time; answers {timestamp} only', async () => {
    ctx.clock.ms += 100_000;
    const res = await push([play(1, 50, 30)]);
    expect(res.body).toEqual({ timestamp: T0 + 100 });
    await push([play(1, 10, 99)]); // older action, later upload: it still overwrites
    const rows = (await pull()).body;
    expect(rows).toEqual({
      actions: [{ podcast: F, episode: ep(1), guid: null, action: 'PLAY', timestamp: `${at(10)}+00:00`, started: 0, position: 99, total: 600 }],
      timestamp: T0 + 100,
    });
    expect(rows.actions[0].timestamp).toMatch(/\+00:00$/);
  });

  it('stores plays only (any case), dropping other actions unseen; missing numbers are -1', async () => {
    await push([{ podcast: F, episode: ep(1), action: 'download', timestamp: at(1) }, { podcast: F, episode: ep(2), action: 'Play', timestamp: at(2) }]);
    expect((await pull()).body.actions).toEqual([
      { podcast: F, episode: ep(2), guid: null, action: 'PLAY', timestamp: `${at(2)}+00:00`, started: -1, position: -1, total: -1 },
    ]);
  });

  it('finds the row by guid first: a new URL for a known guid moves the row; a null guid keeps the stored one', async () => {
    await push([play(1, 1, 1, { guid: 'g1' })]);
    await push([play(2, 2, 2, { guid: 'g1' })]);
    await push([play(2, 3, 3)]);
    expect(ctx.server.episodeLog({ family: 'nextcloud' })).toMatchObject([{ episode: ep(2), guid: 'g1', position: 3 }]);
  });

  it('fails (500) a guid whose new URL another row holds, keeping the rows saved before it in the request', async () => {
    await push([play(1, 1, 1, { guid: 'g1' }), play(2, 2, 2, { guid: 'g2' })]);
    const res = await push([play(3, 3, 3), play(2, 4, 4, { guid: 'g1' })]);
    expect(res.status).toBe(500);
    expect(ctx.server.episodeLog({ family: 'nextcloud' }).map((r) => r.episode)).toEqual([ep(1), ep(2), ep(3)]);
  });

  it('fails (500) a play missing a required key before saving any; a body that is not a list stores nothing (200)', async () => {
    expect((await push([play(1, 1, 1), { podcast: F, episode: ep(2), action: 'play' }])).status).toBe(500);
    expect((await push([play(1, 1, 1, { position: 1.5 })])).status).toBe(500);
    expect((await push({ podcast: F })).status).toBe(200);
    expect((await ctx.api('POST', `${NEXTCLOUD_BASE}/episode_action/create`, { raw: 'nope' })).status).toBe(200);
    expect(ctx.server.episodeLog({ family: 'nextcloud' })).toEqual([]);
  });

  it('fails (500) a media URL over 500 characters or a bad time, keeping the earlier plays', async () => {
    const long = `https://feed.example/${'a'.repeat(500)}.mp3`;
    expect((await push([play(1, 1, 1), { ...play(2, 2, 2), episode: long }])).status).toBe(500);
    expect((await push([play(3, 3, 3), play(4, 4, 4, { timestamp: 'later' })])).status).toBe(500);
    expect(ctx.server.episodeLog({ family: 'nextcloud' }).map((r) => r.episode)).toEqual([ep(1), ep(3)]);
  });

  it('reads an offset and keeps whole seconds', async () => {
    await push([play(1, 0, 1, { timestamp: '2023-01-02T05:04:05.900+02:00' })]);
    expect((await pull()).body.actions[0].timestamp).toBe('2023-01-02T03:04:05+00:00');
  });

  it('since is strict on the action time, a PHP int, 0 when absent; routes are method-bound', async () => {
    ctx.clock.ms += 100_000;
    await push([play(1, 10, 1), play(2, 20, 2)]);
    expect((await pull(`?since=${T0 + 10}`)).body.actions.map((a) => a.episode)).toEqual([ep(2)]);
    expect((await pull(`?since=${T0 + 20}`)).body.actions).toEqual([]);
    expect((await pull('?since=abc')).body.actions).toHaveLength(2);
    expect((await ctx.api('POST', `${NEXTCLOUD_BASE}/episode_action`, { body: [] })).status).toBe(405);
    expect((await ctx.api('GET', `${NEXTCLOUD_BASE}/episode_action/create`)).status).toBe(405);
    expect((await pull('?since=0')).headers.get('content-type')).toBe('application/json; charset=utf-8');
  });

  it('keeps its rows apart from the /api/2 log; another client planted through the admin reaches both', async () => {
    await push([play(1, 1, 1)]);
    expect(ctx.server.episodeLog()).toEqual([]);
    ctx.server.foreign.actions([play(2, 2, 2, { device: 'phone' }), { ...play(3, 3, 3), action: 'download' }]);
    expect(ctx.server.episodeLog({ family: 'nextcloud' }).map((r) => r.episode)).toEqual([ep(1), ep(2)]);
    expect(ctx.server.episodeLog().map((r) => r.episode)).toEqual([ep(2), ep(3)]);
  });
});
