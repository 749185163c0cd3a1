// Episode actions on the opodsync dialect (both path families share one log); the request-by-request
// comparison with the real opodsync is server.gpodder.episodes.parity.test.ts.
import { describe, expect, it } from 'vitest';
import { GPODDER_EPOCH_MS, gpodderServerPerFile } from './server-fixture.ts';
import { NEXTCLOUD_BASE, type WireChanges, type WireEpisodeActions } from '../server/gpodder/server.ts';

const ctx = gpodderServerPerFile({ dialect: 'opodsync' });
const T0 = GPODDER_EPOCH_MS / 1000;
const EP = '/api/2/episodes/alice.json';
const F = 'https://feed.example/rss';
const ep = (n: number) => `https://feed.example/${n}.mp3`;
const at = (s: number) => new Date((T0 + s) * 1000).toISOString().slice(0, 19);
const play = (n: number, s: number, position: number, extra: Record<string, unknown> = {}) => ({
  podcast: F, episode: ep(n), action: 'play', timestamp: at(s), started: 0, position, total: 600, ...extra,
});
const push = (body: unknown, path = EP) => ctx.api('POST', path, { body });
const pull = (query = '', path = EP) => ctx.api<WireEpisodeActions>('GET', `${path}${query}`);

describe('opodsync', () => {
  it('appends every upload (no repeat drop), echoes the fields verbatim, writes Z times; since is inclusive', async () => {
    ctx.clock.ms += 100_000;
    await push([play(1, 10, 5, { guid: 'g1', device: 'phone' }), play(1, 10, 5, { guid: 'g1', device: 'phone' }), play(2, 20, 6)]);
    const body = (await pull(`?since=${T0 + 10}`)).body;
    expect(body.timestamp).toBe(T0 + 100);
    expect(body.actions).toHaveLength(3);
    expect(body.actions[0]).toEqual({
      timestamp: `${at(10)}Z`, started: 0, position: 5, total: 600, guid: 'g1', device: 'phone', episode: ep(1), action: 'play', podcast: F,
    });
    expect((await pull(`?since=${T0 + 11}`)).body.actions.map((a) => a.episode)).toEqual([ep(2)]);
  });

  it('subscribes a feed it has no row for, which a subscription pull then shows as an add', async () => {
    await push([play(1, 1, 1)]);
    const subs = await ctx.api<WireChanges>('GET', '/api/2/subscriptions/alice/web.json?since=0');
    expect(subs.body.add).toEqual([F]);
  });

  it('serves the same log on the Nextcloud paths, either route, and the /api/2 path with any device', async () => {
    await push([play(1, 1, 1)], `${NEXTCLOUD_BASE}/episode_action/create`);
    await push([play(2, 2, 2)], '/api/2/episodes/alice/phone.json');
    expect((await pull('?since=0', `${NEXTCLOUD_BASE}/episode_action`)).body.actions.map((a) => a.episode)).toEqual([ep(1), ep(2)]);
    expect((await pull('', `${NEXTCLOUD_BASE}/episode_action/create`)).body.actions).toHaveLength(2);
    expect(ctx.server.episodeLog({ family: 'nextcloud' })).toEqual(ctx.server.episodeLog());
  });

  it('refuses the whole request for one bad item (400), nothing stored, no feed subscribed', async () => {
    const res = await push([play(1, 1, 1, { podcast: 'https://kept-out.example/f' }), play(2, 2, 2, { episode: 'nope' })]);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, message: 'Invalid URL: nope' });
    expect(ctx.server.episodeLog()).toEqual([]);
    expect(ctx.server.subscribed()).toEqual([]);
  });
});
