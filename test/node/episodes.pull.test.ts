// Issue 18, "Timing and size": episode pull answers are read as they arrive and reduced to the newest per
// episode at once; a full reconcile too large to read fails typed, and the pulls after it go on incrementally
// (the next full one waits a whole interval). The reduction gives the store exactly what every action would.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SyncError } from '../../src/errors.ts';
import { openSyncDatabase } from '../../src/schema.ts';
import { systemClock } from '../../worker/clock.ts';
import type { EpisodeTransport, PlayAction } from '../../worker/episodes/actions.ts';
import { createEpisodeTransport } from '../../worker/gpodder/episodes.ts';
import { createHttp } from '../../worker/http.ts';
import { TooLarge } from '../../worker/http-body.ts';
import { EPISODE_OVERLAP, RECONCILE_INTERVAL, newestPerEpisode, pullEpisodes } from '../../worker/episodes/pull.ts';
import { applyChange, fromPlay, type EpisodeFields } from '../../worker/episodes/register.ts';
import { createEngineStore as createStore } from '../../worker/engine/store.ts';
import { uniqueDb } from './helpers.ts';

const seed = 1813;
const P = 'https://feeds.example/show.xml';

describe('the newest action per episode', () => {
  // A few episodes, some by guid, some by URL (with changing query strings), times and values that tie.
  const action = fc
    .record({
      ep: fc.integer({ min: 0, max: 3 }),
      guid: fc.boolean(),
      query: fc.integer({ min: 0, max: 2 }),
      at: fc.integer({ min: 0, max: 4 }),
      position: fc.integer({ min: 0, max: 6 }),
      total: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
    })
    .map(({ ep, guid, query, at, position, total }): PlayAction => {
      const a: PlayAction = { podcast: P, episode: `https://media.example/${ep}.mp3?q=${query}`, at: at * 1000, position };
      if (total !== undefined) a.total = total;
      if (guid) a.guid = `guid-${ep}`;
      return a;
    });
  /** What the store's registers end with for each identity key (guid, else media URL without query). */
  const fold = (actions: readonly PlayAction[]) => {
    const out = new Map<string, EpisodeFields>();
    for (const a of actions) {
      const key = a.guid ?? a.episode.replace(/\?.*$/, '');
      // Remote actions: in one second the later one wins (register.ts).
      out.set(key, applyChange(out.get(key) ?? {}, fromPlay(a.position ?? 0, a.total), a.at, () => true).fields);
    }
    return out;
  };

  it('gives the registers what every action gives them, in the order read (ties in time, totals only older actions carry)', () => {
    fc.assert(
      fc.property(fc.array(action, { maxLength: 30 }), (actions) => {
        const reduced = newestPerEpisode(actions);
        expect(reduced.length).toBeLessThanOrEqual(actions.length);
        expect(fold(reduced)).toEqual(fold(actions));
      }),
      { seed, numRuns: 500 },
    );
  });

  it('keeps two episodes apart when a guid reads like another episode’s URL', () => {
    const byGuid: PlayAction = { podcast: P, episode: 'https://media.example/a.mp3', guid: 'https://media.example/b.mp3', at: 2000, position: 100 };
    const byUrl: PlayAction = { podcast: P, episode: 'https://media.example/b.mp3', at: 1000, position: 50 };
    expect(newestPerEpisode([byUrl, byGuid])).toHaveLength(2);
  });
});

/** A transport answering from `answer(since)`; `asked` lists each since. */
function fakeTransport(answer: (since: number) => PlayAction[] | Error, timestamp: () => number) {
  const asked: number[] = [];
  const transport: EpisodeTransport = {
    async pull(since, take) {
      asked.push(since);
      const actions = answer(since);
      if (actions instanceof Error) throw actions;
      actions.forEach(take);
      return { count: actions.length, skipped: 0, timestamp: timestamp() };
    },
    async send() {
      return { renamed: new Map() };
    },
  };
  return { transport, asked };
}

async function episodeStore() {
  const store = createStore(openSyncDatabase(uniqueDb('episodes-pull')), () => 'local');
  await store.bind({ server: 'http://127.0.0.1:1', protocol: 'gpodder' });
  return store;
}

describe('a full reconcile too large to read', () => {
  const now = Date.UTC(2025, 0, 10);
  const recent: PlayAction = { podcast: P, episode: 'https://media.example/recent.mp3', at: now - 3600_000, position: 42, total: 100 };
  const tooLarge = () => new TooLarge('GET /episodes: the body is over 67108864 bytes', { status: 200 });

  it('fails typed, pulls incrementally, and asks for everything again only an interval later', async () => {
    const store = await episodeStore();
    const T = Math.floor(now / 1000);
    const { transport, asked } = fakeTransport((since) => (since === 1 ? tooLarge() : [recent]), () => T);
    // A new store: no cursor, so the incremental pull reads the recent past.
    const first = await pullEpisodes(transport, store.episodes, now);
    expect(first.refused).toMatchObject({ code: 'bad-response' });
    expect(first.refs).toHaveLength(1);
    expect(asked[0]).toBe(1);
    expect(asked[1]).toBeGreaterThan(1);
    expect(await store.episodes.cursor()).toEqual({ cursor: T, reconciledAt: now, capped: true });
    // The next runs pull from the cursor, never everything.
    asked.length = 0;
    for (const later of [now + 60_000, now + 3600_000, now + RECONCILE_INTERVAL - 1]) {
      expect((await pullEpisodes(transport, store.episodes, later)).refused).toBeUndefined();
    }
    expect(asked).toEqual([T - EPISODE_OVERLAP, T - EPISODE_OVERLAP, T - EPISODE_OVERLAP]);
    // An interval later the reconcile is tried again (and the pull goes on again).
    asked.length = 0;
    expect((await pullEpisodes(transport, store.episodes, now + RECONCILE_INTERVAL)).refused).toBeDefined();
    expect(asked).toEqual([1, T - EPISODE_OVERLAP]);
    store.db.close();
  });

  it('counts as the interval’s attempt even when the incremental pull after it fails', async () => {
    const store = await episodeStore();
    let down = true;
    const { transport, asked } = fakeTransport((since) => (since === 1 ? tooLarge() : down ? new Error('offline') : [recent]), () => Math.floor(now / 1000));
    await expect(pullEpisodes(transport, store.episodes, now)).rejects.toThrow('offline');
    down = false;
    asked.length = 0;
    await pullEpisodes(transport, store.episodes, now + 60_000);
    expect(asked).not.toContain(1);
    expect(await store.episodes.episodes()).toHaveLength(1);
    store.db.close();
  });

  it('a device clock stepped back after the refusal does not ask for everything again: the interval counts from the step (chaos gPodder seed 727)', async () => {
    const store = await episodeStore();
    const T = Math.floor(now / 1000);
    const { transport, asked } = fakeTransport((since) => (since === 1 ? tooLarge() : [recent]), () => T);
    expect((await pullEpisodes(transport, store.episodes, now)).refused).toBeDefined();
    asked.length = 0;
    // An hour back: the recorded attempt is in the device's future.
    const stepped = now - 3600_000 + 40;
    expect((await pullEpisodes(transport, store.episodes, stepped)).refused).toBeUndefined();
    expect(await pullEpisodes(transport, store.episodes, stepped + RECONCILE_INTERVAL - 1)).toMatchObject({ refs: expect.any(Array) });
    expect(asked).not.toContain(1);
    // A whole interval after the step, the reconcile is tried again.
    asked.length = 0;
    await pullEpisodes(transport, store.episodes, stepped + RECONCILE_INTERVAL);
    expect(asked[0]).toBe(1);
    store.db.close();
  });

  it('a server timestamp that goes back after the refusal does not ask for everything again before the interval is over (chaos gPodder seed 727)', async () => {
    const store = await episodeStore();
    let T = Math.floor(now / 1000);
    const { transport, asked } = fakeTransport((since) => (since === 1 ? tooLarge() : [recent]), () => T);
    expect((await pullEpisodes(transport, store.episodes, now)).refused).toBeDefined();
    // The server is restored from a day-old backup: its timestamps go back a day.
    T -= 86_400;
    asked.length = 0;
    for (const later of [now + 39, now + 60_000, now + RECONCILE_INTERVAL - 1]) await pullEpisodes(transport, store.episodes, later);
    expect(asked).not.toContain(1);
    asked.length = 0;
    await pullEpisodes(transport, store.episodes, now + RECONCILE_INTERVAL);
    expect(asked[0]).toBe(1);
    store.db.close();
  });

  it('another refusal (not a size) changes nothing: the store stays as it was, the next run reconciles', async () => {
    const store = await episodeStore();
    const { transport, asked } = fakeTransport(() => new SyncError('bad-response', 'episode actions: the body is not JSON'), () => 1);
    await expect(pullEpisodes(transport, store.episodes, now)).rejects.toThrow('not JSON');
    expect(await store.episodes.cursor()).toEqual({});
    await expect(pullEpisodes(transport, store.episodes, now)).rejects.toThrow('not JSON');
    expect(asked).toEqual([1, 1]);
    store.db.close();
  });
});

describe('an episode answer is read as it arrives', () => {
  it('hands out each action before the body has ended', async () => {
    const action = (n: number) =>
      JSON.stringify({ podcast: P, episode: `https://media.example/${n}.mp3`, action: 'play', timestamp: '2024-11-27T10:00:00', position: n, total: 100 });
    let more!: (text: string | null) => void;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        const encoder = new TextEncoder();
        more = (text) => (text === null ? controller.close() : controller.enqueue(encoder.encode(text)));
      },
    });
    const http = createHttp({
      baseUrl: 'http://127.0.0.1:9/',
      fetch: (async () => new Response(body, { status: 200 })) as typeof fetch,
      clock: systemClock,
      timeout: 5000,
      auth: () => undefined,
      signal: new AbortController().signal,
    });
    const transport = createEpisodeTransport(http, () => ({ pull: 'pull', upload: 'upload' }), async () => undefined);
    const taken: number[] = [];
    let sawTwo!: () => void;
    const two = new Promise<void>((r) => (sawTwo = r));
    const pulled = transport.pull(1, (a) => {
      taken.push(a.position!);
      if (taken.length === 2) sawTwo();
    });
    more(`{"actions":[${action(1)},${action(2)}`);
    await two;
    // Two actions are in while the answer has not ended.
    expect(taken).toEqual([1, 2]);
    more(`,${action(3)}],"timestamp":1732700000}`);
    more(null);
    expect(await pulled).toEqual({ count: 3, skipped: 0, timestamp: 1732700000 });
    expect(taken).toEqual([1, 2, 3]);
  });
});
