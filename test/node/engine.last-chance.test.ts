// The last-chance copy: what waits, as the requests the next push would make, kept ready for the page to send as
// it goes away. Sent here with Node's fetch as the page would (its own credentials added), then the engine's own
// push repeats it: a re-send must be harmless on every server. Also: a visible page polls, a hidden one does not.
import { describe, expect, it, onTestFinished } from 'vitest';
import type { LastChanceRequest } from '../../src/protocol.ts';
import type { SyncEngine } from '../../worker/index.ts';
import { LAST_CHANCE_BYTES } from '../../worker/engine/last-chance.ts';
import type { GpodderDialect, GpodderServer } from '../server/gpodder/types.ts';
import { startGpodderServer } from '../server/gpodder/server.ts';
import { wallTime } from '../server/listen.ts';
import { episodeEngine, feed, gpodderServer, media } from './episode-helpers.ts';
import { engine, requests, server, uniqueDb, until } from './helpers.ts';

/** The copy as the engine tells it, newest last. */
function copies(e: SyncEngine): LastChanceRequest[][] {
  const seen: LastChanceRequest[][] = [];
  e.onLastChance((copy) => seen.push(copy));
  return seen;
}

const latest = (seen: LastChanceRequest[][]) => seen[seen.length - 1] ?? [];

/** Send a copy as the page does, with `authorization` added. */
async function sendCopy(baseUrl: string, copy: LastChanceRequest[], authorization: string): Promise<number[]> {
  return Promise.all(
    copy.map(async (r) => (await fetch(new URL(r.path, baseUrl.replace(/\/*$/, '/')), { method: r.method, headers: { ...r.headers, Authorization: authorization }, ...(r.body === undefined ? {} : { body: r.body }) })).status),
  );
}

const basic = `Basic ${Buffer.from('alice:alice-password').toString('base64')}`;

/** Subscribe feeds 0..n-1 where the engine reads its list (mygpo: this device's list). */
function subscribe(s: GpodderServer, n: number): void {
  const perDevice = s.dialect === 'mygpo';
  if (perDevice) s.registerDevice('web-player');
  s.foreign.add(Array.from({ length: n }, (_, i) => feed(i)), perDevice ? { device: 'web-player' } : undefined);
}

describe.each(['mygpo', 'opodsync'] as GpodderDialect[])('the last-chance copy over gPodder (%s dialect)', (dialect) => {
  it('holds a throttled position and a new subscription, goes up as the page sends it, and the push repeating it changes nothing', async () => {
    const s = await gpodderServer(dialect);
    subscribe(s, 2);
    const list = dialect === 'mygpo' ? { device: 'web-player' } : {};
    // No push of its own: only the copy can carry these.
    const e = episodeEngine(s, 'gpodder', 'last-chance', { pushDelay: 3_600_000, progressInterval: 3_600_000 });
    const seen = copies(e);
    await e.sync();
    const ref = { podcast: feed(0), episode: media('lc-1'), guid: 'lc-1' };
    await e.setProgress(ref, { position: 5, total: 1800 });
    await e.sync();
    await e.setProgress(ref, { position: 12 });
    await e.add(feed('new'));
    const copy = await until(() => (latest(seen).length === 2 ? latest(seen) : undefined), 3000, 'the copy with both');
    // Episode actions first, then the subscription upload; paths relative to baseUrl, no credentials.
    expect(copy.map((r) => [r.method, r.path])).toEqual([
      ['POST', 'api/2/episodes/alice.json'],
      ['POST', 'api/2/subscriptions/alice/web-player.json'],
    ]);
    expect(JSON.stringify(copy)).not.toMatch(/alice-password|Basic /);
    expect(JSON.parse(copy[0]!.body!)).toEqual([expect.objectContaining({ podcast: feed(0), guid: 'lc-1', position: 12, total: 1800, action: 'play' })]);
    expect(JSON.parse(copy[1]!.body!)).toEqual({ add: [feed('new')], remove: [] });

    expect(await sendCopy(s.url, copy, basic)).toEqual([200, 200]);
    // mygpo keeps no guid: found by URL.
    const newest = () => s.episodeLog().filter((a) => a.episode === media('lc-1')).at(-1);
    expect(newest()).toMatchObject({ position: 12 });
    expect(s.subscribed(list)).toContain(feed('new'));

    // The next open's push sends the same again: the server's position stays, the feed stays, the queue empties.
    const report = await e.sync();
    expect(report).toMatchObject({ failed: 0, pending: 0 });
    expect(newest()).toMatchObject({ position: 12 });
    expect(s.subscribed(list)).toContain(feed('new'));
    expect((await e.status()).pendingEpisodes).toBe(0);
    // Acknowledged: the copy is empty again.
    await until(() => latest(seen).length === 0, 3000, 'the copy to empty');
  });
});

describe('the last-chance copy: order and bounds', () => {
  it('one action per episode, newest first, the oldest left out until the bodies fit 64 KiB', async () => {
    const s = await gpodderServer('mygpo');
    subscribe(s, 1);
    const e = episodeEngine(s, 'gpodder', 'last-chance-bound', { pushDelay: 3_600_000, progressInterval: 3_600_000 });
    const seen = copies(e);
    await e.sync();
    // 150 episodes with long URLs (about 1 KiB an action): more than 64 KiB of actions.
    const long = 'x'.repeat(900);
    for (let i = 0; i < 150; i++) await e.setProgress({ podcast: feed(0), episode: media(`${i}-${long}`), guid: `b-${i}` }, { position: 10 + i });
    await e.setProgress({ podcast: feed(0), episode: media(`${0}-${long}`), guid: 'b-0' }, { position: 999 });
    const copy = await until(() => (latest(seen)[0]?.body?.includes('"position":999') ? latest(seen) : undefined), 5000, 'the copy with the last change');
    const total = copy.reduce((n, r) => n + new TextEncoder().encode(r.body ?? '').length, 0);
    expect(total).toBeLessThanOrEqual(LAST_CHANCE_BYTES);
    const actions = JSON.parse(copy[0]!.body!) as { guid: string; position: number }[];
    expect(actions.length).toBeGreaterThan(30);
    expect(actions.length).toBeLessThan(100);
    // Newest first: b-0 (changed last), then b-149, b-148, ...; each episode once.
    expect(actions.slice(0, 3).map((a) => a.guid)).toEqual(['b-0', 'b-149', 'b-148']);
    expect(new Set(actions.map((a) => a.guid)).size).toBe(actions.length);
  });
});

describe('the last-chance copy over the Open Podcast API', () => {
  it('PATCH and DELETE as the push sends them (a repeat is harmless); an add waits for the next open', async () => {
    const s = await server({ seed: 3 });
    const e = engine(s, { pushDelay: 3_600_000 });
    const seen = copies(e);
    await e.sync();
    const [a, b] = s.state().map((x) => x.guid);
    await e.update(a!, { isSubscribed: false });
    await e.remove(b!);
    await e.add('https://feeds.example/added.xml');
    const copy = await until(() => (latest(seen).length === 2 ? latest(seen) : undefined), 3000, 'the copy');
    expect(copy.map((r) => [r.method, r.path, r.body])).toEqual([
      ['PATCH', `subscriptions/${encodeURIComponent(a!)}`, JSON.stringify({ is_subscribed: false })],
      ['DELETE', `subscriptions/${encodeURIComponent(b!)}`, undefined],
    ]);
    const statuses = await sendCopy(s.url, copy, 'Bearer demo-token');
    expect(statuses[0]).toBe(200);
    expect(s.entry(a!)?.is_subscribed).toBe(false);
    // The push repeats both: the PATCH sets the same flag, the DELETE of a deleted entry is done.
    await until(async () => (await e.sync()).pending === 0, 8000, 'the queue to empty');
    expect(s.entry(a!)?.is_subscribed).toBe(false);
    expect((await e.failed()).length).toBe(0);
    expect(requests(s, 'POST', '/subscriptions')).toHaveLength(1);
    await until(() => latest(seen).length === 0, 3000, 'the copy to empty');
  });

  it('an add the copy never carries is not counted as copied: taken back before it leaves, it folds away', async () => {
    const s = await server({ seed: 3 });
    const e = engine(s, { pushDelay: 3_600_000 });
    const seen = copies(e);
    await e.sync();
    await until(() => seen.length > 0, 3000, 'the first copy');
    const url = 'https://feeds.example/taken-back.xml';
    const { guid } = await e.add(url);
    expect(latest(seen)).toEqual([]);
    // Before, the page's copy marked the add copied (as if it might have left), so the remove queued a DELETE behind it.
    await e.remove(guid);
    expect(await e.pending()).toEqual([]);
    await e.sync();
    expect(requests(s, 'POST', '/subscriptions')).toHaveLength(0);
    expect(requests(s, 'DELETE')).toHaveLength(0);
    expect(s.state().some((x) => x.feed_url === url)).toBe(false);
  });
});

describe('fresher while open', () => {
  it('a visible page pulls every pullInterval; a hidden one does not; shown again, it pulls at once', async () => {
    const s = await server({ seed: 1 });
    const e = engine(s, { pullInterval: 60 });
    await until(() => requests(s, 'GET', '/subscriptions').length >= 3, 3000, 'periodic pulls');
    e.setVisible(false);
    await until(async () => (await e.status()).phase === 'idle', 3000, 'the last run to end');
    const count = requests(s, 'GET', '/subscriptions').length;
    await new Promise((r) => setTimeout(r, 300));
    expect(requests(s, 'GET', '/subscriptions').length).toBe(count);
    e.setVisible(true);
    await until(() => requests(s, 'GET', '/subscriptions').length > count, 3000, 'a pull once shown');
  });

  it('pulls every 60 s by default', async () => {
    const s = await server({ seed: 1 });
    const timers: number[] = [];
    const clock = { now: () => Date.now(), setTimeout: (fn: () => void, ms: number) => (timers.push(ms), setTimeout(fn, ms)), clearTimeout: (t: unknown) => clearTimeout(t as never), random: Math.random };
    const e = engine(s, { clock, pullInterval: undefined as unknown as number });
    await e.sync();
    expect(timers).toContain(60_000);
    expect(timers).not.toContain(300_000);
  });

  it('markPlayed takes the length when none is known', async () => {
    const s = await gpodderServer('opodsync');
    subscribe(s, 1);
    const e = episodeEngine(s, 'gpodder', 'mark-total');
    await e.sync();
    const ref = { podcast: feed(0), episode: media('mt'), guid: 'mt' };
    expect(await e.markPlayed(ref, true, { total: 1800 })).toMatchObject({ played: true, position: 1800, total: 1800 });
    await e.sync();
    expect(s.episodeLog().filter((a) => a.guid === 'mt').at(-1)).toMatchObject({ position: 1800, total: 1800 });
    await expect(e.markPlayed({ ...ref, guid: 'mt-2', episode: media('mt-2') })).rejects.toMatchObject({ code: 'invalid' });
  });
});

describe('a handed-out add: in the copy while in flight here; once its answer is lost, the copy and the push wait for the server\'s word (issue 31)', () => {
  it("gPodder: in the copy while its upload is in flight, out of it after its answer was lost, and the push settles it by a later pull", async () => {
    // A second per reading of the server's clock: its stamps (whole seconds) order our upload, another client's
    // removal and the pull.
    let now = 1_700_000_000_000;
    const s = await startGpodderServer({ port: 0, dialect: 'opodsync', time: { ...wallTime, now: () => (now += 1000) } });
    onTestFinished(() => s.close());
    subscribe(s, 1);
    let release: (() => void) | undefined;
    const fetch: typeof globalThis.fetch = async (input, init) => {
      // The first upload waits here, in flight, until the test lets it go.
      if (init?.method === 'POST' && String(input).includes('subscriptions') && !release) await new Promise<void>((r) => (release = r));
      return globalThis.fetch(input, init);
    };
    const dbName = uniqueDb('lc-lost');
    const e = episodeEngine(s, 'gpodder', 'lc-lost', { dbName, retry: { baseDelay: 60_000, maxDelay: 60_000 }, fetch });
    const seen = copies(e);
    await e.sync();
    // Another tab, offline: its edits rebuild this tab's copy (their change events) and start no run here.
    const other = episodeEngine(s, 'gpodder', 'lc-lost-other', { dbName });
    other.setOnline(false);
    s.dropNext(1, { method: 'POST', path: /subscription/ }, { afterHandling: true });
    await e.add(feed('lost'));
    await until(() => release, 3000, 'the upload in flight');
    const uploads = () => latest(seen).filter((r) => r.path.includes('subscriptions')).map((r) => JSON.parse(r.body!) as { add: string[] });
    await other.add(feed('a'));
    const inFlight = await until(() => (uploads()[0]?.add.includes(feed('a')) ? uploads() : undefined), 3000, 'the copy with the other tab\'s add');
    expect(inFlight[0]!.add.sort()).toEqual([feed('a'), feed('lost')].sort());
    release!();
    await until(async () => (await e.pending()).find((c) => c.feedUrl === feed('lost'))?.attempts === 1, 3000, 'the upload to fail');
    // The push waits for the server's word, and so does the copy: sent at close, it would re-subscribe a feed
    // another device removed since (engine.soak-found-copy-resends-add.test.ts).
    await other.add(feed('b'));
    const after = await until(() => (uploads()[0]?.add.includes(feed('b')) ? uploads() : undefined), 3000, 'the copy with the second add');
    expect(after[0]!.add.sort()).toEqual([feed('a'), feed('b')].sort());
    s.foreign.remove([feed('lost')]);
    await e.sync();
    expect(await e.subscription(feed('lost'))).toMatchObject({ isSubscribed: false, pending: false });
    expect(s.subscribed({ device: 'web-player' })).not.toContain(feed('lost'));
  });
});
