// A feed URL rewrite moves the feed's listening state with it (issue 18, "Which feeds, which episodes"): a local
// update(guid, { feedUrl }), the server's `update_urls` in an upload's answer or in a pull, and a refused move
// falling back. Episodes live under the feed URL the local view shows, so they are uploaded under it and
// `episodes({ podcast })` finds them there. Against the gPodder reference server in each dialect.
import { describe, expect, it } from 'vitest';
import type { ChangeEvent, EpisodeRef, Protocol } from '../../src/types.ts';
import type { SyncEngine } from '../../worker/index.ts';
import type { GpodderDialect, GpodderServer } from '../server/gpodder/types.ts';
import { settle } from './helpers.ts';
import { DAY_AGO, episodeEngine, feed, gpodderServer, media, naive } from './episode-helpers.ts';




const engine = (s: GpodderServer, protocol: Exclude<Protocol, 'opa'>, fetch?: typeof globalThis.fetch): SyncEngine =>
  episodeEngine(s, protocol, 'episode-feeds', fetch ? { fetch } : {});
const gpodder = gpodderServer;

/** Subscribe feeds 0..n-1 where the engine reads its list (mygpo over v2 paths: this device's list). */
function subscribe(s: GpodderServer, n: number, protocol: Exclude<Protocol, 'opa'>): void {
  const perDevice = s.dialect === 'mygpo' && protocol === 'gpodder';
  if (perDevice) s.registerDevice('web-player');
  s.foreign.add(Array.from({ length: n }, (_, i) => feed(i)), perDevice ? { device: 'web-player' } : undefined);
}

/** This device's actions as the server stores them (the Nextcloud app's rows keep no device). */
const mine = (s: GpodderServer, protocol: Exclude<Protocol, 'opa'>) =>
  s.episodeLog(protocol === 'nextcloud' && s.dialect === 'mygpo' ? { family: 'nextcloud' } : {}).filter((a) => a.device === 'web-player' || protocol === 'nextcloud');
const episodePosts = (s: GpodderServer) => s.log().filter((r) => r.method === 'POST' && /episode/.test(r.path));
/** The actions each episode upload carried, as sent. */
const sentActions = (s: GpodderServer) =>
  episodePosts(s).flatMap((r) => (Array.isArray(r.body) ? r.body : ((r.body as { actions?: unknown[] } | undefined)?.actions ?? [])) as { podcast: string; position: number }[]);

/** Every episode ref the engine's change events named. */
function heard(e: SyncEngine): EpisodeRef[] {
  const refs: EpisodeRef[] = [];
  e.on('change', (event: ChangeEvent) => refs.push(...(event.episodes ?? [])));
  return refs;
}

const cases: [GpodderDialect, Exclude<Protocol, 'opa'>][] = [
  ['mygpo', 'gpodder'],
  ['opodsync', 'gpodder'],
  ['mygpo', 'nextcloud'],
  ['opodsync', 'nextcloud'],
];

describe.each(cases)('a feed moved, %s dialect over %s paths', (dialect, protocol) => {
  it('a position set, then the feed renamed locally: the action goes up under the new URL, and the episode is listed there', async () => {
    const s = await gpodder(dialect);
    subscribe(s, 1, protocol);
    const e = engine(s, protocol);
    await e.sync();
    const ref = { podcast: feed(0), episode: media(1), guid: 'ep-1' };
    await e.setProgress(ref, { position: 120, total: 1800 });
    const events = heard(e);
    await e.update(feed(0), { feedUrl: feed('moved') });
    // At once, in the local view: the episode is the moved feed's, and the change event names it at both URLs.
    expect(await e.episodes({ podcast: feed(0) })).toEqual([]);
    expect(await e.episodes({ podcast: feed('moved') })).toMatchObject([{ episode: media(1), guid: 'ep-1', position: 120, total: 1800, pending: true }]);
    expect(events).toEqual(expect.arrayContaining([expect.objectContaining({ podcast: feed(0), guid: 'ep-1' }), expect.objectContaining({ podcast: feed('moved'), guid: 'ep-1' })]));
    await settle(e);
    expect(mine(s, protocol).map((a) => [a.podcast, a.position])).toEqual([[feed('moved'), 120]]);
    expect(await e.episodes({ podcast: feed('moved') })).toMatchObject([{ position: 120, pending: false }]);
    expect(await e.episodes({ podcast: feed(0) })).toEqual([]);
    expect(await e.episode({ ...ref, podcast: feed('moved') })).toMatchObject({ position: 120, pending: false });
    expect((await e.status()).pendingEpisodes).toBe(0);
  });

  it('a rename while an episode change is pending: sent once, under the new URL; actions pulled under the old URL are the moved feed\'s', async () => {
    const s = await gpodder(dialect);
    subscribe(s, 1, protocol);
    const e = engine(s, protocol);
    await e.sync();
    // Synced once under the old URL.
    await e.setProgress({ podcast: feed(0), episode: media(1), guid: 'ep-1' }, { position: 60, total: 1800 });
    await e.sync();
    expect(sentActions(s).map((a) => [a.podcast, a.position])).toEqual([[feed(0), 60]]);
    // Offline: a newer position, then the move.
    e.setOnline(false);
    await e.setProgress({ podcast: feed(0), episode: media(1), guid: 'ep-1' }, { position: 300, total: 1800 });
    await e.update(feed(0), { feedUrl: feed('moved') });
    // Another device, still on the old URL, played another episode of it.
    // (A minute ago: within the overlap every pull re-reads.)
    s.foreign.actions([{ podcast: feed(0), episode: media(2), guid: 'ep-2', device: 'phone', action: 'play', timestamp: naive(Date.now() - 60_000), started: 0, position: 900, total: 900 }]);
    e.setOnline(true);
    await settle(e);
    expect(sentActions(s).map((a) => [a.podcast, a.position])).toEqual([
      [feed(0), 60],
      [feed('moved'), 300],
    ]);
    // The old URL's actions read again (the overlap, the full reconcile) land under the new URL, not the old.
    expect(await e.episodes({ podcast: feed(0) })).toEqual([]);
    const moved = await e.episodes({ podcast: feed('moved') });
    // (mygpo keeps no guid it was sent: found by enclosure URL.)
    expect(moved.map((x) => [x.episode, x.position, x.played, x.pending]).sort()).toEqual([
      [media(1), 300, false, false],
      [media(2), 900, true, false],
    ]);
  });

  it('a change whose upload was under way under the old URL when the feed moved is sent again, under the new URL', async () => {
    const s = await gpodder(dialect);
    subscribe(s, 1, protocol);
    let e: SyncEngine | undefined;
    let moving: Promise<unknown> | undefined;
    // The move happens while the episode upload is on its way (before it reaches the server).
    const fetch: typeof globalThis.fetch = async (input, init) => {
      const request = new Request(input, init);
      if (request.method === 'POST' && /episode/.test(request.url) && !moving) {
        moving = e!.update(feed(0), { feedUrl: feed('moved') });
        await moving;
      }
      return globalThis.fetch(request);
    };
    e = engine(s, protocol, fetch);
    await e.sync();
    await e.setProgress({ podcast: feed(0), episode: media(1), guid: 'ep-1' }, { position: 42, total: 1800 });
    await e.sync();
    expect(moving).toBeDefined();
    await settle(e);
    expect(sentActions(s).map((a) => [a.podcast, a.position])).toEqual([
      [feed(0), 42],
      [feed('moved'), 42],
    ]);
    expect(await e.episodes()).toMatchObject([{ podcast: feed('moved'), position: 42, pending: false }]);
  });

  it("an episode change waits while its feed's move has not reached the server: no action names a URL the account never kept", async () => {
    const s = await gpodder(dialect);
    subscribe(s, 1, protocol);
    const e = engine(s, protocol);
    await e.sync();
    // The server takes no subscription upload for now: the move stays queued (sent, unanswered).
    s.failNext(1000, 503, { method: 'POST', path: /subscri/ });
    await e.update(feed(0), { feedUrl: feed('a') });
    await e.setProgress({ podcast: feed('a'), episode: media(1), guid: 'ep-1' }, { position: 60, total: 1800 });
    await e.sync().catch(() => undefined);
    // Under feed('a') it would name a feed the account does not have (opodsync subscribes such a feed).
    expect(sentActions(s)).toEqual([]);
    expect(await e.episodes({ podcast: feed('a') })).toMatchObject([{ position: 60, pending: true }]);
    // Moved again before the server heard of the first move: feed('a') is never the account's.
    await e.update(feed('a'), { feedUrl: feed('b') });
    s.clearFaults();
    await settle(e);
    expect(sentActions(s).map((a) => [a.podcast, a.position])).toEqual([[feed('b'), 60]]);
    const list = s.subscribed(s.dialect === 'mygpo' && protocol === 'gpodder' ? { device: 'web-player' } : undefined);
    expect(list).toContain(feed('b'));
    expect(list).not.toContain(feed('a'));
    expect(await e.episodes()).toMatchObject([{ podcast: feed('b'), position: 60, pending: false }]);
  });

  it('a local change naming the URL a feed moved away from is kept under the URL it moved to, as a pulled action is', async () => {
    const s = await gpodder(dialect);
    subscribe(s, 1, protocol);
    const e = engine(s, protocol);
    await e.sync();
    await e.update(feed(0), { feedUrl: feed('m') });
    await settle(e);
    // An app (or a queue it keeps) still holding the old URL.
    const state = await e.setProgress({ podcast: feed(0), episode: media(1), guid: 'ep-1' }, { position: 90, total: 1800 });
    expect(state).toMatchObject({ podcast: feed('m'), position: 90 });
    expect(await e.episodes({ podcast: feed(0) })).toEqual([]);
    await settle(e);
    expect(sentActions(s).map((a) => [a.podcast, a.position])).toEqual([[feed('m'), 90]]);
    expect(await e.episodes()).toMatchObject([{ podcast: feed('m'), position: 90, pending: false }]);
  });

  it('a move the server refuses falls back, and the episodes with it: uploaded under the URL the account keeps', async () => {
    const s = await gpodder(dialect);
    subscribe(s, 1, protocol);
    const e = engine(s, protocol);
    await e.sync();
    // Offline while the edits are made: their push would otherwise race the refusal set up below.
    e.setOnline(false);
    await e.setProgress({ podcast: feed(0), episode: media(1), guid: 'ep-1' }, { position: 75, total: 1800 });
    await e.update(feed(0), { feedUrl: feed('moved') });
    expect(await e.episodes({ podcast: feed('moved') })).toHaveLength(1);
    // The subscription upload (it goes before the listening state's) is refused whole (400): the move goes to
    // failed(), the view falls back.
    s.failNext(1, 400, { method: 'POST' });
    e.setOnline(true);
    await e.sync();
    expect(await e.failed()).toMatchObject([{ kind: 'update', change: { feedUrl: feed('moved') } }]);
    expect((await e.subscriptions()).map((x) => x.feedUrl)).toEqual([feed(0)]);
    expect(await e.episodes({ podcast: feed('moved') })).toEqual([]);
    await settle(e);
    expect(await e.episodes({ podcast: feed(0) })).toMatchObject([{ position: 75, pending: false }]);
    expect(sentActions(s).map((a) => a.podcast)).toEqual([feed(0)]);
  });
});

describe('the server rewrites a feed URL (update_urls)', () => {
  it("in an upload's answer (mygpo): the episodes of the added feed move to the URL the server keeps, and go up under it", async () => {
    const s = await gpodder('mygpo');
    s.registerDevice('web-player');
    const e = engine(s, 'gpodder');
    await e.sync();
    e.setOnline(false);
    const sent = 'HTTPS://Feeds.Example/Loud.xml?';
    await e.add(sent);
    await e.setProgress({ podcast: sent, episode: media(1), guid: 'ep-1' }, { position: 33, total: 600 });
    const events = heard(e);
    e.setOnline(true);
    await settle(e);
    const [stored] = s.subscribed({ device: 'web-player' });
    expect(stored).toBeDefined();
    expect(stored).not.toBe(sent);
    expect((await e.subscriptions()).map((x) => x.feedUrl)).toEqual([stored]);
    expect(await e.episodes({ podcast: sent })).toEqual([]);
    expect(await e.episodes({ podcast: stored })).toMatchObject([{ guid: 'ep-1', position: 33, pending: false }]);
    expect(sentActions(s).map((a) => [a.podcast, a.position])).toEqual([[stored, 33]]);
    expect(events).toEqual(expect.arrayContaining([expect.objectContaining({ podcast: sent }), expect.objectContaining({ podcast: stored })]));
  });

  it('in a pull: the old URL\'s episodes merge into the new URL\'s by the identity rule, the newer value of each field winning', async () => {
    const s = await gpodder('opodsync');
    subscribe(s, 1, 'gpodder');
    // The pull answer names the rewrite (the reference server never does: a rewrite made on the server's side).
    let rewrite: [string, string] | undefined;
    const fetch: typeof globalThis.fetch = async (input, init) => {
      const response = await globalThis.fetch(input, init);
      const url = new URL(new Request(input, init).url);
      if (!rewrite || !/subscriptions/.test(url.pathname) || (init?.method ?? 'GET') !== 'GET') return response;
      const body = (await response.json()) as { update_urls?: [string, string][] };
      body.update_urls = [rewrite];
      return new Response(JSON.stringify(body), { status: response.status, headers: response.headers });
    };
    const e = engine(s, 'gpodder', fetch);
    // State already held under the new URL (another device's, pulled), and a local change of the same episode
    // under the old URL, not sent yet.
    s.foreign.actions([{ podcast: feed('new'), episode: media('1?t=b'), guid: 'ep-1', device: 'phone', action: 'play', timestamp: naive(DAY_AGO), started: 0, position: 10, total: 1800 }]);
    await e.sync();
    expect(await e.episodes({ podcast: feed('new') })).toMatchObject([{ position: 10 }]);
    e.setOnline(false);
    await e.setProgress({ podcast: feed(0), episode: media('1?t=a'), guid: 'ep-1' }, { position: 500 });
    // The server moved the subscription: the old URL removed, the new one added, and the rewrite named.
    s.foreign.remove([feed(0)]);
    s.foreign.add([feed('new')]);
    rewrite = [feed(0), feed('new')];
    e.setOnline(true);
    await settle(e);
    expect((await e.subscriptions()).map((x) => x.feedUrl)).toEqual([feed('new')]);
    expect(await e.episodes({ podcast: feed(0) })).toEqual([]);
    // One episode: the local position (newer), the length only the other device gave, the newest enclosure URL.
    expect(await e.episodes({ podcast: feed('new') })).toMatchObject([{ guid: 'ep-1', episode: media('1?t=a'), position: 500, total: 1800, pending: false }]);
    expect(sentActions(s).map((a) => [a.podcast, a.position])).toEqual([[feed('new'), 500]]);
  });
});
