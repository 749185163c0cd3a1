// Listening state against the real opodsync (both path families): a position set offline and replayed, another
// device's position pulled, a late upload of an old action caught by the full reconcile, a stale remote position
// that never overwrites a newer local one, progress throttled to the interval, nothing for unsubscribed feeds.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Clock, Protocol } from '../../src/types.ts';
import { systemClock } from '../../worker/clock.ts';
import { createSyncEngine, type SyncEngine } from '../../worker/index.ts';
import { startOpodsync, type Opodsync } from '../support/opodsync.ts';
import { describeOpodsync } from '../support/opodsync-suite.ts';
import { uniqueDb } from './helpers.ts';

const feed = (run: string, n: number | string) => `https://feeds.example/${run}/show-${n}.xml`;
const media = (run: string, n: number | string) => `https://media.example/${run}/ep-${n}.mp3`;
const naive = (ms: number) => new Date(ms).toISOString().slice(0, 19);

interface ServerAction {
  podcast: string;
  episode: string;
  action: string;
  timestamp: string;
  position?: number;
  total?: number;
  device?: string;
  guid?: string;
}

describeOpodsync('interop: listening state against the real opodsync', () => {
  let server: Opodsync;
  beforeAll(async () => {
    server = await startOpodsync();
  }, 30_000);
  afterAll(() => server?.stop());

  const engines: SyncEngine[] = [];
  afterEach(async () => {
    while (engines.length) await engines.pop()!.close();
  });

  const auth = () => `Basic ${Buffer.from(`${server.username}:${server.password}`).toString('base64')}`;

  function engine(protocol: Exclude<Protocol, 'opa'>, options: { clock?: Clock; progressInterval?: number } = {}): SyncEngine {
    const e = createSyncEngine({
      protocol,
      baseUrl: server.baseUrl,
      auth: { type: 'basic', username: server.username, password: server.password },
      device: 'web-player',
      dbName: uniqueDb(`opodsync-episodes-${protocol}`),
      pullInterval: 0,
      pushDelay: 0,
      timeout: 5000,
      retry: { baseDelay: 20, maxDelay: 200 },
      ...options,
    });
    engines.push(e);
    return e;
  }

  /** Another device: plain HTTP to the v2 paths. */
  async function phone(path: string, body: unknown): Promise<void> {
    const response = await fetch(`${server.baseUrl}${path}`, {
      method: 'POST',
      headers: { Authorization: auth(), 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
  }

  /** Every action the server holds for a feed (opodsync keeps every upload). */
  async function actions(podcast: string): Promise<ServerAction[]> {
    const response = await fetch(`${server.baseUrl}/api/2/episodes/${server.username}.json?since=0`, { headers: { Authorization: auth() } });
    const body = (await response.json()) as { actions: ServerAction[] };
    return body.actions.filter((a) => a.podcast === podcast);
  }

  async function subscribed(): Promise<Set<string>> {
    const response = await fetch(`${server.baseUrl}/api/2/subscriptions/${server.username}/phone.json?since=0`, { headers: { Authorization: auth() } });
    return new Set(((await response.json()) as { add: string[] }).add);
  }

  describe.each(['gpodder', 'nextcloud'] as const)('%s paths', (protocol) => {
    const run = `${protocol}-${Date.now()}`;

    it('a position set offline is kept across the outage and replayed as one play action', async () => {
      await phone(`/api/2/subscriptions/${server.username}/phone.json`, { add: [feed(run, 1)] });
      const e = engine(protocol);
      await e.sync();
      e.setOnline(false);
      const ref = { podcast: feed(run, 1), episode: media(run, 1), guid: `${run}-guid-1` };
      const local = await e.setProgress(ref, { position: 754, total: 3600 });
      expect(local).toMatchObject({ position: 754, total: 3600, played: false, pending: true });
      expect((await e.status()).pendingEpisodes).toBe(1);
      e.setOnline(true);
      const report = await e.sync();
      expect(report.episodesPushed).toBe(1);
      expect(await e.episode(ref)).toMatchObject({ position: 754, pending: false });
      const sent = await actions(feed(run, 1));
      expect(sent).toHaveLength(1);
      expect(sent[0]).toMatchObject({ episode: media(run, 1), action: 'play', position: 754, total: 3600, guid: `${run}-guid-1` });
    });

    it("another device's position comes down; matched by guid when the enclosure URL changed", async () => {
      await phone(`/api/2/subscriptions/${server.username}/phone.json`, { add: [feed(run, 2)] });
      const e = engine(protocol);
      await e.sync();
      const ref = { podcast: feed(run, 2), episode: `${media(run, 2)}?token=old`, guid: `${run}-guid-2` };
      await e.setProgress(ref, { position: 10, total: 1800 });
      await e.sync();
      // The phone plays on, from a rotated media URL, a minute later.
      const when = Date.now() + 60_000;
      await phone(`/api/2/episodes/${server.username}.json`, [
        { podcast: feed(run, 2), episode: `${media(run, 2)}?token=new`, guid: `${run}-guid-2`, action: 'play', timestamp: naive(when), started: 10, position: 900, total: 1800 },
      ]);
      const seen: unknown[] = [];
      e.on('change', (event) => event.episodes && seen.push(...event.episodes));
      await e.sync();
      expect(await e.episode(ref)).toMatchObject({ position: 900, total: 1800, played: false, pending: false });
      expect(seen).toContainEqual(expect.objectContaining({ guid: `${run}-guid-2` }));
    });

    it('a late upload of an old action is missed by the overlap pull and caught by the full reconcile', async () => {
      await phone(`/api/2/subscriptions/${server.username}/phone.json`, { add: [feed(run, 3)] });
      let skew = 0;
      // A day passes (on both of the engine's clocks): the daily full reconcile is due.
      const clock: Clock = { ...systemClock, now: () => Date.now() + skew, monotonic: () => performance.now() + skew };
      const e = engine(protocol, { clock });
      await e.sync();
      const ref = { podcast: feed(run, 3), episode: media(run, 3) };
      // A phone offline for two hours uploads what it played then.
      await phone(`/api/2/episodes/${server.username}.json`, [
        { podcast: feed(run, 3), episode: media(run, 3), action: 'play', timestamp: naive(Date.now() - 2 * 3600_000), started: 0, position: 1200, total: 2400 },
      ]);
      await e.sync();
      expect(await e.episode(ref)).toBeUndefined();
      skew = 25 * 3600_000;
      await e.sync();
      expect(await e.episode(ref)).toMatchObject({ position: 1200, total: 2400, pending: false });
    });

    it('a stale remote position never overwrites a newer local one, which is then uploaded', async () => {
      await phone(`/api/2/subscriptions/${server.username}/phone.json`, { add: [feed(run, 4)] });
      const e = engine(protocol);
      await e.sync();
      e.setOnline(false);
      const ref = { podcast: feed(run, 4), episode: media(run, 4) };
      await e.setProgress(ref, { position: 300, total: 3000 });
      await phone(`/api/2/episodes/${server.username}.json`, [
        { podcast: feed(run, 4), episode: media(run, 4), action: 'play', timestamp: naive(Date.now() - 600_000), started: 0, position: 2000, total: 3000 },
      ]);
      e.setOnline(true);
      await e.sync();
      expect(await e.episode(ref)).toMatchObject({ position: 300, pending: false });
      const mine = (await actions(feed(run, 4))).filter((a) => a.device === 'web-player');
      expect(mine.map((a) => a.position)).toEqual([300]);
    });

    it('progress every few ms is uploaded at most once per interval, the last upload carrying the last position', async () => {
      await phone(`/api/2/subscriptions/${server.username}/phone.json`, { add: [feed(run, 5)] });
      const interval = 400;
      const e = engine(protocol, { progressInterval: interval });
      await e.sync();
      const ref = { podcast: feed(run, 5), episode: media(run, 5) };
      const started = Date.now();
      for (let i = 1; i <= 1000; i++) {
        await e.setProgress(ref, { position: i, total: 5000 });
        if (i % 100 === 0) await new Promise((r) => setTimeout(r, 100));
      }
      await e.sync();
      const elapsed = Date.now() - started;
      const uploads = (await actions(feed(run, 5))).filter((a) => a.device === 'web-player');
      // One per interval at most, plus the first at once and the flush of sync().
      expect(uploads.length).toBeLessThanOrEqual(2 + Math.floor(elapsed / interval));
      expect(uploads.at(-1)).toMatchObject({ position: 1000 });
    });

    it('nothing is uploaded for a feed the account does not subscribe to (opodsync would subscribe it)', async () => {
      const e = engine(protocol);
      await e.sync();
      const ref = { podcast: feed(run, 'preview'), episode: media(run, 'preview') };
      await e.setProgress(ref, { position: 5, total: 900 });
      await e.markPlayed(ref);
      await e.sync();
      expect(await e.episode(ref)).toMatchObject({ played: true, pending: true });
      expect(await actions(feed(run, 'preview'))).toEqual([]);
      expect((await subscribed()).has(feed(run, 'preview'))).toBe(false);
      // Once subscribed, it goes.
      await e.add(feed(run, 'preview'));
      await e.sync();
      expect(await e.episode(ref)).toMatchObject({ played: true, pending: false });
      expect(await actions(feed(run, 'preview'))).toHaveLength(1);
    });
  });
});
