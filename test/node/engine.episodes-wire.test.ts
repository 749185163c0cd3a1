// Issue 18, "Timing and size" and the hostile-world rules on the episode path, against the gPodder reference
// server: answers past the 16 MiB of other bodies, one too large to reconcile, mygpo's same-second pages, a batch
// the Nextcloud app chokes on (a media URL over 500 characters), `update_urls` in an upload's answer, action
// times from 1970, and nothing written after clear().
import { describe, expect, it } from 'vitest';
import { openSyncDatabase } from '../../src/schema.ts';
import type { Protocol } from '../../src/types.ts';
import { MAX_ACTIONS_PER_ANSWER, MAX_EPISODE_BODY_BYTES } from '../../worker/gpodder/episodes.ts';
import { MAX_EPISODES_PER_PULL } from '../../worker/episodes/pull.ts';
import type { SyncEngine } from '../../worker/index.ts';
import type { GpodderServer } from '../server/gpodder/types.ts';
import { spyFetch, uniqueDb } from './helpers.ts';
import { episodeEngine, feed, gpodderServer, media, naive } from './episode-helpers.ts';

const MiB = 1024 * 1024;
const DAY = 24 * 3600_000;
const DAY_AGO = Date.now() - DAY;



function engine(s: GpodderServer, protocol: Exclude<Protocol, 'opa'>, more: { fetch?: typeof fetch; dbName?: string; baseDelay?: number } = {}): SyncEngine {
  return episodeEngine(s, protocol, 'episodes-wire', {
    ...(more.dbName ? { dbName: more.dbName } : {}),
    timeout: 20_000,
    retry: { baseDelay: more.baseDelay ?? 10, maxDelay: Math.max(100, more.baseDelay ?? 0) },
    ...(more.fetch ? { fetch: more.fetch } : {}),
  });
}
const gpodder = gpodderServer;

function subscribe(s: GpodderServer, n: number, protocol: Exclude<Protocol, 'opa'>): void {
  const perDevice = s.dialect === 'mygpo' && protocol === 'gpodder';
  if (perDevice) s.registerDevice('web-player');
  s.foreign.add(Array.from({ length: n }, (_, i) => feed(i)), perDevice ? { device: 'web-player' } : undefined);
}

const episodeGets = (s: GpodderServer) => s.log().filter((r) => r.method === 'GET' && /episode/.test(r.path));
const episodePosts = (s: GpodderServer) => s.log().filter((r) => r.method === 'POST' && /episode/.test(r.path));

/** Another device's play, as AntennaPod uploads it (a tracking query makes media URLs long, as real ones are). */
function play(n: number, at: number, position: number) {
  return {
    podcast: feed(n % 20),
    episode: `${media(n)}?utm_source=antennapod&utm_medium=podcast&utm_campaign=listening-history&session=${'0123456789abcdef'.repeat(4)}`,
    guid: `guid-${n}`,
    device: 'phone',
    action: 'play',
    timestamp: naive(at),
    started: 0,
    position,
    total: 100_000, // longer than any position here (a position past the total is clamped to it)
  };
}

describe('episode answers have their own cap (64 MiB), read and reduced as they come', () => {
  it('a long-used opodsync account whose full history is one answer over 16 MiB reconciles', async () => {
    const s = await gpodder('opodsync');
    subscribe(s, 20, 'gpodder');
    // ~60,000 uploads of 2,000 episodes over two months: one unpaged answer of ~20 MB.
    const n = 60_000;
    for (let i = 0; i < n; i += 5000) {
      s.foreign.actions(Array.from({ length: 5000 }, (_, k) => play((i + k) % 2000, DAY_AGO - 60 * DAY + (i + k) * 60_000, i + k)));
    }
    const full = await fetch(`${s.url}/api/2/episodes/alice.json?since=1`, { headers: { Authorization: `Basic ${btoa('alice:alice-password')}` } });
    expect((await full.arrayBuffer()).byteLength).toBeGreaterThan(16 * MiB);
    const e = engine(s, 'gpodder');
    const report = await e.sync();
    expect(report.episodesPulled).toBe(2000);
    // The newest play of each episode wins: episode k's last upload was n - 2000 + k.
    expect(await e.episode({ podcast: feed(7), episode: media(7), guid: 'guid-7' })).toMatchObject({ position: n - 2000 + 7, pending: false });
  }, 60_000);

  it('a full reconcile over the cap fails typed; the incremental pull goes on, and the next runs pull from the cursor', async () => {
    const s = await gpodder('opodsync');
    subscribe(s, 20, 'gpodder');
    s.foreign.actions([play(1, DAY_AGO, 321)]);
    // The full answer (since=1) is 65 MiB of plays, made only as it is read; other pulls are the server's.
    let pulled = 0;
    const unit = new TextEncoder().encode(`${JSON.stringify(play(2, DAY_AGO - 90 * DAY, 5))},`.repeat(2000));
    const fetch = spyFetch(async (url, init, real) => {
      if ((init?.method ?? 'GET') !== 'GET' || !/episodes/.test(url.pathname) || url.searchParams.get('since') !== '1') return real(url, init);
      const head = new TextEncoder().encode('{"timestamp":1732700000,"actions":[');
      const body = new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            if (pulled === 0) controller.enqueue(head);
            if (pulled > 65 * MiB) return controller.close();
            pulled += unit.byteLength;
            controller.enqueue(unit);
          },
        },
        { highWaterMark: 0 },
      );
      return new Response(body, { status: 200, headers: { 'Content-Type': 'application/json' } });
    });
    const e = engine(s, 'gpodder', { fetch });
    const error = await e.sync().catch((x: unknown) => x);
    expect(error).toMatchObject({ name: 'SyncError', code: 'bad-response', message: expect.stringContaining('reconcile') });
    expect(pulled).toBeLessThanOrEqual(MAX_EPISODE_BODY_BYTES + 2 * unit.byteLength);
    // Nothing of the refused answer was written; the recent play came in by the incremental pull.
    expect(await e.episodes()).toEqual([expect.objectContaining({ episode: expect.stringContaining(media(1)), position: 321 })]);
    // The next runs pull from the cursor and succeed: no full reconcile in a loop.
    s.foreign.actions([play(3, Date.now() - 60_000, 77)]);
    const before = episodeGets(s).length;
    await e.sync();
    await e.sync();
    const later = episodeGets(s).slice(before);
    expect(later).toHaveLength(2);
    expect(later.every((r) => Number(r.query.since) > 1)).toBe(true);
    expect(await e.episode({ podcast: feed(3), episode: media(3), guid: 'guid-3' })).toMatchObject({ position: 77 });
  }, 60_000);

  // Caps met inside the body's reader (its error wrapped by the HTTP layer): the episodes one pull holds, and
  // the items one answer holds (here items that are no actions: ~2 MB).
  const overCap = {
    [`more than ${MAX_EPISODES_PER_PULL} episodes`]: { items: MAX_EPISODES_PER_PULL + 1, item: (i: number) => JSON.stringify({ podcast: feed(2), episode: media(`old-${i}`), action: 'play', timestamp: naive(DAY_AGO - 90 * DAY), position: 5 }) },
    [`more than ${MAX_ACTIONS_PER_ANSWER} items`]: { items: MAX_ACTIONS_PER_ANSWER + 1, item: () => '0' },
  };
  for (const [what, { items, item }] of Object.entries(overCap)) it(`a full reconcile of ${what} is recorded as tried: later syncs never ask since=1`, async () => {
    const s = await gpodder('opodsync');
    subscribe(s, 20, 'gpodder');
    s.foreign.actions([play(1, DAY_AGO, 321)]);
    // The full answer (since=1), under the byte cap, made as it is read; other pulls are the server's.
    const sinces: number[] = [];
    const fetch = spyFetch(async (url, init, real) => {
      if ((init?.method ?? 'GET') === 'GET' && /episodes/.test(url.pathname)) sinces.push(Number(url.searchParams.get('since')));
      if ((init?.method ?? 'GET') !== 'GET' || !/episodes/.test(url.pathname) || url.searchParams.get('since') !== '1') return real(url, init);
      let i = 0;
      const body = new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            const part = [];
            for (let k = 0; k < 2000 && i < items; k++, i++) part.push(item(i));
            const head = i === part.length ? '{"timestamp":1732700000,"actions":[' : ',';
            if (!part.length) {
              controller.enqueue(new TextEncoder().encode(']}'));
              return controller.close();
            }
            controller.enqueue(new TextEncoder().encode(head + part.join(',')));
          },
        },
        { highWaterMark: 0 },
      );
      return new Response(body, { status: 200, headers: { 'Content-Type': 'application/json' } });
    });
    const e = engine(s, 'gpodder', { fetch });
    const error = await e.sync().catch((x: unknown) => x);
    expect(error).toMatchObject({ name: 'SyncError', code: 'bad-response', message: expect.stringContaining('reconcile') });
    expect(await e.episodes()).toEqual([expect.objectContaining({ episode: expect.stringContaining(media(1)), position: 321 })]);
    // Two more syncs: incremental pulls, both succeed, neither asks for the whole history again.
    s.foreign.actions([play(3, Date.now() - 60_000, 77)]);
    await e.sync();
    await e.sync();
    expect(sinces.filter((since) => since === 1)).toHaveLength(1);
    expect(sinces).toHaveLength(4);
    expect(await e.episode({ podcast: feed(3), episode: media(3), guid: 'guid-3' })).toMatchObject({ position: 77 });
  }, 60_000);
});

describe('mygpo pages of 1,000 actions', () => {
  it('a full page whose timestamp equals the since sent is followed by since + 1 (more than 1,000 in one second are cut)', async () => {
    const s = await gpodder('mygpo');
    subscribe(s, 1, 'gpodder');
    const second = Math.floor(DAY_AGO / 1000) * 1000;
    const actions = Array.from({ length: 1500 }, (_, i) => ({ ...play(i, second, i + 1), podcast: feed(0) }));
    for (let i = 0; i < actions.length; i += 100) s.foreign.actions(actions.slice(i, i + 100));
    s.foreign.actions([{ ...play(5000, second + 5000, 9), podcast: feed(0) }]);
    const e = engine(s, 'gpodder');
    await e.sync();
    const T = second / 1000;
    expect(episodeGets(s).map((r) => Number(r.query.since))).toEqual([1, T, T + 1]);
    // The first 1,000 of that second are read, and what came after it.
    expect(await e.episode({ podcast: feed(0), episode: media(999), guid: 'guid-999' })).toMatchObject({ position: 1000 });
    expect(await e.episode({ podcast: feed(0), episode: media(1200), guid: 'guid-1200' })).toBeUndefined();
    expect(await e.episode({ podcast: feed(0), episode: media(5000), guid: 'guid-5000' })).toMatchObject({ position: 9 });
  }, 30_000);
});

describe('a batch answered 5xx three times in a row is split', () => {
  const long = `https://media.example/${'tracking-redirect/'.repeat(30)}episode.mp3`;

  it('the Nextcloud app chokes on a media URL over 500 characters: the 99 others arrive after three failed uploads, the long one ends refused', async () => {
    expect(long.length).toBeGreaterThan(500);
    const s = await gpodder('mygpo');
    subscribe(s, 1, 'nextcloud');
    const e = engine(s, 'nextcloud');
    await e.sync();
    // Queued offline, the long one first: the app saves actions in turn, so none of the batch is kept before it fails.
    e.setOnline(false);
    await e.setProgress({ podcast: feed(0), episode: long, guid: 'long' }, { position: 5, total: 100 });
    for (let i = 0; i < 99; i++) await e.setProgress({ podcast: feed(0), episode: media(i), guid: `good-${i}` }, { position: i + 1, total: 100 });
    e.setOnline(true);
    const rows = () => s.episodeLog({ family: 'nextcloud' }).length;
    for (let run = 0; run < 5 && rows() < 99; run++) await e.sync();
    expect(rows()).toBe(99);
    // Uploads of the whole batch failed three times (in syncs or the background runs between), then it was split.
    const whole = episodePosts(s).filter((r) => (r.body as unknown[]).length === 100);
    expect(whole.map((r) => r.status)).toEqual([500, 500, 500]);
    const states = await e.episodes();
    expect(states.filter((x) => x.guid !== 'long').every((x) => !x.pending && !x.error)).toBe(true);
    expect(states.find((x) => x.guid === 'long')).toMatchObject({ pending: false, error: { code: 'server', status: 500 } });
    expect((await e.status()).pendingEpisodes).toBe(0);
    // A later change to it clears the error and queues it again (the listener may fix nothing, but nothing is lost).
    expect(await e.setProgress({ podcast: feed(0), episode: long, guid: 'long' }, { position: 6 })).toMatchObject({ pending: true });
  }, 30_000);

  it('a server down for uploads refuses nothing: every change stays queued, and each run sends at most three uploads', async () => {
    const s = await gpodder('mygpo');
    subscribe(s, 1, 'nextcloud');
    // Backoffs of a minute: only the syncs below upload (each sends everything, holds or not).
    const e = engine(s, 'nextcloud', { baseDelay: 60_000 });
    await e.sync();
    e.setOnline(false);
    for (let i = 0; i < 40; i++) await e.setProgress({ podcast: feed(0), episode: media(i), guid: `g-${i}` }, { position: i + 1, total: 100 });
    s.failNext(1000, 503, { method: 'POST', path: /episode_action/ });
    e.setOnline(true);
    for (let run = 0; run < 5; run++) {
      const before = episodePosts(s).length;
      await e.sync();
      expect(episodePosts(s).length - before).toBeLessThanOrEqual(3);
    }
    const states = await e.episodes();
    expect(states).toHaveLength(40);
    expect(states.every((x) => x.pending && !x.error)).toBe(true);
    s.clearFaults();
    await e.sync();
    expect((await e.status()).pendingEpisodes).toBe(0);
    expect(s.episodeLog({ family: 'nextcloud' })).toHaveLength(40);
  }, 30_000);
});

describe('update_urls in an episode upload’s answer', () => {
  it('mygpo sanitises a media URL: the stored episode takes the new URL and sends it from then on', async () => {
    const s = await gpodder('mygpo');
    subscribe(s, 1, 'gpodder');
    const e = engine(s, 'gpodder');
    await e.sync();
    const ref = { podcast: feed(0), episode: 'https://Media.Example/my show/ep 1.mp3', guid: 'spaced' };
    await e.setProgress(ref, { position: 10, total: 100 });
    await e.sync();
    const stored = 'https://media.example/my%20show/ep%201.mp3';
    expect(episodePosts(s).at(-1)?.body).toEqual([expect.objectContaining({ episode: ref.episode })]);
    expect(await e.episode(ref)).toMatchObject({ episode: stored, position: 10, pending: false });
    // The app goes on naming its URL: the rewritten one is what goes up.
    await e.setProgress(ref, { position: 20 });
    await e.sync();
    expect(episodePosts(s).at(-1)?.body).toEqual([expect.objectContaining({ episode: stored, position: 20 })]);
    expect(await e.episode(ref)).toMatchObject({ episode: stored, position: 20, pending: false });
    expect(s.episodeLog().map((a) => a.episode)).toEqual([stored, stored]);
  });

  it('"" refuses the episode (error, out of the queue); a rewrite to a non-http(s) URL is ignored', async () => {
    const s = await gpodder('mygpo');
    subscribe(s, 1, 'gpodder');
    let rewrite: ((sent: string) => string) | undefined;
    const fetch = spyFetch(async (url, init, real) => {
      const response = await real(url, init);
      if (!rewrite || init?.method !== 'POST' || !/episodes/.test(url.pathname)) return response;
      const sent = (JSON.parse(String(init.body)) as { episode: string }[]).map((a) => [a.episode, rewrite!(a.episode)]);
      const answer = (await response.json()) as { timestamp: number };
      return Response.json({ timestamp: answer.timestamp, update_urls: sent });
    });
    const e = engine(s, 'gpodder', { fetch });
    await e.sync();
    const refused = { podcast: feed(0), episode: media('refused'), guid: 'refused' };
    const scripted = { podcast: feed(0), episode: media('scripted'), guid: 'scripted' };
    await e.setProgress(refused, { position: 10, total: 100 });
    rewrite = () => '';
    await e.sync();
    expect(await e.episode(refused)).toMatchObject({ episode: media('refused'), pending: false, error: { code: 'invalid' } });
    // The episode's next change clears the refusal, a remote one too (another device's newer play).
    rewrite = undefined;
    // A second later than the refused change (mygpo lists nothing stamped after its own clock).
    await new Promise((resolve) => setTimeout(resolve, 1100));
    s.foreign.actions([{ podcast: feed(0), episode: media('refused'), guid: 'refused', device: 'phone', action: 'play', timestamp: new Date().toISOString().slice(0, 19), started: 0, position: 42, total: 100 }]);
    await e.sync();
    const cleared = await e.episode(refused);
    expect(cleared).toMatchObject({ position: 42, pending: false });
    expect(cleared?.error).toBeUndefined();
    await e.setProgress(scripted, { position: 10, total: 100 });
    rewrite = () => 'javascript:alert(1)';
    await e.sync();
    const state = await e.episode(scripted);
    expect(state).toMatchObject({ episode: media('scripted'), pending: false });
    expect(state?.error).toBeUndefined();
  });
});

describe('hostile-world rules on the episode path', () => {
  it('action times from 1970 on are read (not only from 2000)', async () => {
    const s = await gpodder('opodsync');
    subscribe(s, 1, 'gpodder');
    s.foreign.actions([{ ...play(1, Date.UTC(1995, 5, 1), 600), podcast: feed(0) }]);
    const e = engine(s, 'gpodder');
    await e.sync();
    expect(await e.episode({ podcast: feed(0), episode: media(1), guid: 'guid-1' })).toMatchObject({ position: 600, changedAt: '1995-06-01T00:00:00.000Z' });
  });

  /** Every episode row and the episode cursor in a store. */
  async function episodeRows(dbName: string) {
    const db = openSyncDatabase(dbName);
    try {
      return { rows: await db.episodes.toArray(), cursor: await db.meta.get('episodeCursor') };
    } finally {
      db.close();
    }
  }

  it('clear() in another tab while an episode pull or upload is answered: nothing is written into the wiped store', async () => {
    const s = await gpodder('opodsync');
    subscribe(s, 1, 'gpodder');
    s.foreign.actions([{ ...play(1, DAY_AGO, 600), podcast: feed(0) }]);
    let wipeOn: 'GET' | 'POST' | undefined;
    let wipe = async () => undefined as unknown;
    const fetch = spyFetch(async (url, init, real) => {
      const method = init?.method ?? 'GET';
      const response = await real(url, init);
      if (method === wipeOn && /episodes/.test(url.pathname)) {
        wipeOn = undefined;
        await wipe();
      }
      return response;
    });
    const dbName = uniqueDb('episodes-cleared');
    const e = engine(s, 'gpodder', { fetch, dbName });
    await e.sync();
    const other = engine(s, 'gpodder', { dbName, fetch: (() => Promise.reject(new TypeError('offline tab'))) as typeof fetch });
    wipe = () => other.clear();
    // A pull whose answer arrives after the wipe.
    s.foreign.actions([{ ...play(2, DAY_AGO, 700), podcast: feed(0) }]);
    wipeOn = 'GET';
    await expect(e.sync()).rejects.toMatchObject({ code: 'closed' });
    expect(await episodeRows(dbName)).toEqual({ rows: [], cursor: undefined });
    // An upload whose answer arrives after the wipe.
    await e.sync();
    await e.setProgress({ podcast: feed(0), episode: media(3), guid: 'guid-3' }, { position: 5, total: 100 });
    wipeOn = 'POST';
    await e.sync().catch(() => undefined);
    expect((await episodeRows(dbName)).rows).toEqual([]);
  });
});
