// The reactive store (`client.store()`): its contract on a scripted source (identity, no-op writes, coalescing,
// one read at a time), then over the real engine in-process and through the client over comlink.
import { MessageChannel } from 'node:worker_threads';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSyncClient } from '../../src/index.ts';
import { createStores, type StoreSource } from '../../src/store.ts';
import { SyncError } from '../../src/errors.ts';
import type { ChangeEvent, EpisodeRef, EpisodeState, FailedChange, PendingChange, Subscription, SyncSnapshot, SyncStatus } from '../../src/types.ts';
import { exposeSyncEngine } from '../../worker/index.ts';
import { startGpodderServer } from '../server/gpodder/server.ts';
import { TOKEN, engine, server, settle, uniqueDb, until } from './helpers.ts';

const row = (guid: string, isSubscribed = true): Subscription => ({ guid, feedUrl: `https://${guid}.example/feed`, isSubscribed, pending: false });
/** Episode `n` of feed `podcast`, its change at day `n` (so the engine's order, newest change first, is by `n` down). */
const ep = (podcast: string, n: number, position = 0): EpisodeState => ({
  podcast,
  episode: `${podcast}/ep-${n}.mp3`,
  guid: `${podcast}#${n}`,
  position,
  played: false,
  changedAt: new Date(Date.UTC(2026, 0, n)).toISOString(),
  pending: false,
});
const refOf = ({ podcast, episode, guid }: EpisodeState): EpisodeRef => ({ podcast, episode, guid: guid! });
const P = 'https://p.example/feed';
const Q = 'https://q.example/feed';
const idle: SyncStatus = { phase: 'idle', online: true, network: 'online', leader: true, pending: 0, failed: 0, pendingEpisodes: 0 };

/** A source whose reads answer from `data` (copied, as comlink would), or wait while `hold` is set. */
function scripted() {
  const data = {
    subscriptions: [row('a'), row('b'), row('c')],
    pending: [] as PendingChange[],
    failed: [] as FailedChange[],
    episodes: [ep(P, 1), ep(P, 2), ep(P, 3), ep(Q, 1)],
    // As over OPA: no listening state.
    unsupported: false,
    // How long each read takes (fake timers).
    readMs: 0,
  };
  const listeners = { change: new Set<(e: ChangeEvent) => void>(), status: new Set<(s: SyncStatus) => void>() };
  const reads = { count: 0, inFlight: 0, maxInFlight: 0, subscriptions: 0, episodes: [] as (string | undefined)[] };
  let hold: Promise<void> | undefined;
  const answer = async <T>(pick: () => T): Promise<T> => {
    reads.count++;
    reads.inFlight++;
    reads.maxInFlight = Math.max(reads.maxInFlight, reads.inFlight);
    // What the read sees is what the store held when it asked, even if it answers late.
    const value = structuredClone(pick());
    await hold;
    if (data.readMs) await new Promise((resolve) => setTimeout(resolve, data.readMs));
    reads.inFlight--;
    return value;
  };
  const source: StoreSource = {
    subscriptions: (filter) => (reads.subscriptions++, answer(() => data.subscriptions.filter((r) => !filter?.guids || filter.guids.includes(r.guid)))),
    pending: () => answer(() => data.pending),
    failed: () => answer(() => data.failed),
    status: () => answer(() => idle),
    episode(ref) {
      reads.episodes.push(ref.episode);
      return answer(() => data.episodes.find((e) => (e.guid !== undefined ? e.guid === ref.guid : e.episode === ref.episode)));
    },
    episodes(filter) {
      reads.episodes.push(filter?.podcast);
      if (data.unsupported) return Promise.reject(new SyncError('unsupported', 'listening state is not part of the opa protocol'));
      return answer(() => data.episodes.filter((e) => e.podcast === filter?.podcast).sort((a, b) => b.changedAt.localeCompare(a.changedAt)));
    },
    on(event, listener) {
      const set = listeners[event] as Set<typeof listener>;
      set.add(listener);
      return () => void set.delete(listener);
    },
  };
  return {
    data,
    reads,
    source,
    change: (guids: string[], queue?: true, episodes?: EpisodeRef[]) =>
      listeners.change.forEach((l) => l({ guids, ...(queue ? { queue } : {}), ...(episodes ? { episodes } : {}) })),
    status: (s: SyncStatus) => listeners.status.forEach((l) => l(s)),
    hold(): () => void {
      let release!: () => void;
      hold = new Promise<void>((r) => (release = r));
      return () => {
        hold = undefined;
        release();
      };
    },
  };
}

/** Let the store's timer fire and its reads settle. */
async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await vi.advanceTimersByTimeAsync(20);
}

describe('store() contract', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('subscribe calls a function or an observer at once, and returns a function that also has unsubscribe()', async () => {
    vi.useFakeTimers();
    const s = scripted();
    const store = createStores(s.source)();
    const seen: SyncSnapshot[] = [];
    const observed: SyncSnapshot[] = [];
    const off = store.subscribe((snap) => seen.push(snap));
    const sub = store.subscribe({ next: (snap) => observed.push(snap) });
    expect(seen).toEqual([store.getSnapshot()]);
    expect(observed).toEqual([store.getSnapshot()]);
    expect(seen[0]!.ready).toBe(false);
    expect(typeof off).toBe('function');
    expect(typeof sub.unsubscribe).toBe('function');
    await flush();
    expect(seen.map((x) => x.ready)).toEqual([false, true]);
    expect(observed[1]).toBe(seen[1]);
    off();
    sub.unsubscribe();
    s.data.subscriptions = [row('a', false)];
    s.change(['a', 'b', 'c']);
    await flush();
    expect(store.getSnapshot().subscriptions).toHaveLength(1);
    expect(seen).toHaveLength(2);
    expect(observed).toHaveLength(2);
  });

  it('keeps the same snapshot until content changes; a change keeps unchanged rows, and everything is frozen', async () => {
    vi.useFakeTimers();
    const s = scripted();
    const store = createStores(s.source)();
    await flush();
    const first = store.getSnapshot();
    expect(first.ready).toBe(true);
    expect(store.getSnapshot()).toBe(first);
    expect(Object.isFrozen(first) && Object.isFrozen(first.subscriptions) && Object.isFrozen(first.subscriptions[0])).toBe(true);
    s.data.subscriptions = [row('a'), row('b', false), row('c')];
    s.change(['b']);
    await flush();
    const second = store.getSnapshot();
    expect(second).not.toBe(first);
    expect(second.subscriptions[0]).toBe(first.subscriptions[0]);
    expect(second.subscriptions[2]).toBe(first.subscriptions[2]);
    expect(second.subscriptions[1]).toMatchObject({ guid: 'b', isSubscribed: false });
    // The list patched in place is frozen with the snapshot it joins.
    expect(Object.isFrozen(second.subscriptions) && Object.isFrozen(second.subscriptions[1])).toBe(true);
    expect(second.pending).toBe(first.pending);
    expect(second.status).toBe(first.status);
  });

  it('makes no snapshot for a write that changes nothing (an equal re-read, an equal status)', async () => {
    vi.useFakeTimers();
    const s = scripted();
    const store = createStores(s.source)();
    await flush();
    const first = store.getSnapshot();
    const calls: SyncSnapshot[] = [];
    store.subscribe((snap) => calls.push(snap));
    s.change(['a', 'b'], true);
    s.status({ ...idle });
    await flush();
    expect(store.getSnapshot()).toBe(first);
    expect(calls).toEqual([first]);
  });

  it('coalesces a burst of events into one read and one snapshot', async () => {
    vi.useFakeTimers();
    const s = scripted();
    const store = createStores(s.source)();
    await flush();
    const before = s.reads.count;
    const calls: SyncSnapshot[] = [];
    store.subscribe((snap) => calls.push(snap));
    for (let i = 0; i < 1000; i++) {
      s.data.subscriptions = [...s.data.subscriptions, row(`n${i}`)];
      s.change([`n${i}`]);
      s.status({ ...idle, phase: 'pulling', progress: { pages: i, entries: i } });
    }
    await flush();
    // subscriptions + pending + failed, once.
    expect(s.reads.count - before).toBe(3);
    expect(calls).toHaveLength(2);
    expect(calls[1]!.subscriptions).toHaveLength(1003);
    expect(calls[1]!.status.progress).toEqual({ pages: 999, entries: 999 });
  });

  it('makes at most one snapshot a frame, and a read that changed nothing holds back no later snapshot', async () => {
    vi.useFakeTimers();
    const s = scripted();
    const store = createStores(s.source)();
    await flush();
    const times: number[] = [];
    store.subscribe(() => times.push(Date.now()));
    const flip = (guid: string) => {
      s.data.subscriptions = s.data.subscriptions.map((r) => (r.guid === guid ? { ...r, isSubscribed: !r.isSubscribed } : r));
      s.change([guid]);
    };
    const start = Date.now();
    flip('a');
    await vi.advanceTimersByTimeAsync(1);
    // After a quiet spell, an edit shows at once.
    expect(times.slice(1)).toEqual([start]);
    flip('b');
    await vi.advanceTimersByTimeAsync(10);
    expect(times).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(10);
    // The next one waits for the frame (its reads take no time here).
    expect(times.slice(1)).toEqual([start, start + 16]);
    await vi.advanceTimersByTimeAsync(20);
    // Events whose reads change nothing (an equal row, an equal status) make no snapshot...
    s.change(['c'], true);
    s.status({ ...idle });
    await vi.advanceTimersByTimeAsync(1);
    expect(times).toHaveLength(3);
    // ...so an edit right after them still shows at once, not a frame later.
    const edit = Date.now();
    flip('c');
    await vi.advanceTimersByTimeAsync(1);
    expect(times.slice(1)).toEqual([start, start + 16, edit]);
  });

  it('starts a read a read\'s length before the frame ends, that length being a read of the lists (not of a status alone)', async () => {
    vi.useFakeTimers();
    const s = scripted();
    const store = createStores(s.source)();
    await flush();
    s.data.readMs = 5;
    const times: number[] = [];
    store.subscribe(() => times.push(Date.now()));
    s.data.subscriptions = [row('a', false), row('b'), row('c')];
    s.change(['a']);
    await vi.advanceTimersByTimeAsync(30);
    // A status alone: a snapshot at once, its read taking no time.
    s.status({ ...idle, phase: 'pulling' });
    await vi.advanceTimersByTimeAsync(0);
    const status = Date.now();
    expect(times.at(-1)).toBe(status);
    await vi.advanceTimersByTimeAsync(1);
    s.data.subscriptions = [row('a', false), row('b', false), row('c')];
    s.change(['b']);
    await vi.advanceTimersByTimeAsync(30);
    // The edit's read (5 ms) started 11 ms after the status snapshot, so it lands a frame after it, not a read later.
    expect(times.slice(2)).toEqual([status, status + 16]);
    expect(store.getSnapshot().subscriptions[1]!.isSubscribed).toBe(false);
  });

  it('reads one at a time, so a slow read never lands after a newer one', async () => {
    vi.useFakeTimers();
    const s = scripted();
    const store = createStores(s.source)();
    await flush();
    s.reads.maxInFlight = 0;
    const release = s.hold();
    s.data.subscriptions = [row('a', false)];
    s.change(['a', 'b', 'c']);
    await flush();
    // The first read is still out; the newer write and its event come meanwhile.
    s.data.subscriptions = [row('a', false), row('z')];
    s.change(['z']);
    await flush();
    expect(s.reads.inFlight).toBe(3);
    release();
    await flush();
    expect(s.reads.maxInFlight).toBe(3);
    expect(store.getSnapshot().subscriptions.map((r) => r.guid)).toEqual(['a', 'z']);
  });

  it('a queue-only event re-reads the queue, not the list', async () => {
    vi.useFakeTimers();
    const s = scripted();
    const store = createStores(s.source)();
    await flush();
    const first = store.getSnapshot();
    s.data.pending = [{ id: 1, kind: 'update', guid: 'a', feedUrl: 'https://a.example/feed', createdAt: 1, attempts: 1, lastError: { code: 'server', message: 'down', status: 503 } }];
    const before = s.reads.count;
    s.change([], true);
    await flush();
    expect(s.reads.count - before).toBe(2);
    expect(store.getSnapshot().subscriptions).toBe(first.subscriptions);
    expect(store.getSnapshot().pending[0]).toMatchObject({ attempts: 1, lastError: { status: 503 } });
  });
});

describe('store({ podcast }) contract', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('carries that podcast\'s episodes, frozen, in the engine\'s order; an edit of one keeps the other rows and the lists', async () => {
    vi.useFakeTimers();
    const s = scripted();
    const stores = createStores(s.source);
    const store = stores(P);
    expect(store.getSnapshot()).toMatchObject({ ready: false, episodes: [] });
    await flush();
    const first = store.getSnapshot();
    expect(first.ready).toBe(true);
    expect(first.episodes!.map((e) => e.episode)).toEqual([3, 2, 1].map((n) => `${P}/ep-${n}.mp3`));
    expect(Object.isFrozen(first.episodes) && Object.isFrozen(first.episodes![0])).toBe(true);
    expect(first.subscriptions.map((r) => r.guid)).toEqual(['a', 'b', 'c']);
    const subscriptionReads = s.reads.subscriptions;
    s.data.episodes[1] = ep(P, 2, 600);
    s.change([], undefined, [refOf(s.data.episodes[1]!)]);
    await flush();
    const second = store.getSnapshot();
    expect(second).not.toBe(first);
    expect(second.episodes![1]).toMatchObject({ position: 600 });
    expect(second.episodes![0]).toBe(first.episodes![0]);
    expect(second.episodes![2]).toBe(first.episodes![2]);
    expect(second.subscriptions).toBe(first.subscriptions);
    expect(second.status).toBe(first.status);
    // An episode change reads episodes only.
    expect(s.reads.subscriptions).toBe(subscriptionReads);
  });

  it('re-reads on a change naming an episode of its podcast, not of another; an equal re-read makes no snapshot', async () => {
    vi.useFakeTimers();
    const s = scripted();
    const store = createStores(s.source)(P);
    await flush();
    const first = store.getSnapshot();
    const calls: SyncSnapshot[] = [];
    store.subscribe((snap) => calls.push(snap));
    s.reads.episodes.length = 0;
    s.data.episodes[3] = ep(Q, 1, 99);
    s.change([], undefined, [refOf(s.data.episodes[3]!)]);
    await flush();
    expect(s.reads.episodes).toEqual([]);
    s.change([], undefined, [refOf(s.data.episodes[0]!)]);
    await flush();
    expect(s.reads.episodes).toEqual([s.data.episodes[0]!.episode]);
    expect(store.getSnapshot()).toBe(first);
    expect(calls).toEqual([first]);
  });

  it('reads a named episode alone and puts it at its place: moved first by a newer change, added, removed, as a whole read orders them', async () => {
    vi.useFakeTimers();
    const s = scripted();
    const store = createStores(s.source)(P);
    await flush();
    const first = store.getSnapshot();
    const whole = () => s.data.episodes.filter((e) => e.podcast === P).sort((a, b) => b.changedAt.localeCompare(a.changedAt));
    s.reads.episodes.length = 0;
    // Episode 1 played now: the newest change, first in the list.
    s.data.episodes[0] = { ...ep(P, 1, 42), changedAt: ep(P, 9).changedAt };
    s.change([], undefined, [refOf(s.data.episodes[0]!)]);
    await flush();
    expect(s.reads.episodes).toEqual([`${P}/ep-1.mp3`]);
    expect(store.getSnapshot().episodes).toEqual(whole());
    expect(store.getSnapshot().episodes![1]).toBe(first.episodes![0]);
    // A new episode between the others, and one gone (the read finds none), in one read.
    const gone = refOf(s.data.episodes[2]!);
    s.data.episodes.splice(2, 1);
    s.data.episodes.push(ep(P, 4));
    s.change([], undefined, [refOf(ep(P, 4)), gone]);
    await flush();
    expect(s.reads.episodes).toEqual([`${P}/ep-1.mp3`, `${P}/ep-4.mp3`, gone.episode]);
    expect(store.getSnapshot().episodes).toEqual(whole());
    expect(Object.isFrozen(store.getSnapshot().episodes)).toBe(true);
  });

  it('reads the whole list when more than a few episodes of its podcast were named since its last read', async () => {
    vi.useFakeTimers();
    const s = scripted();
    const store = createStores(s.source)(P);
    await flush();
    s.reads.episodes.length = 0;
    for (let n = 1; n <= 9; n++) s.data.episodes.push(ep(P, 10 + n));
    s.change([], undefined, s.data.episodes.slice(4).map(refOf));
    await flush();
    expect(s.reads.episodes).toEqual([P]);
    expect(store.getSnapshot().episodes).toHaveLength(12);
  });

  it('over a protocol with no listening state (episodes() unsupported): episodes [] and ready', async () => {
    vi.useFakeTimers();
    const s = scripted();
    s.data.unsupported = true;
    const store = createStores(s.source)(P);
    await flush();
    expect(store.getSnapshot()).toMatchObject({ ready: true, episodes: [] });
    expect(store.getSnapshot().subscriptions).toHaveLength(3);
  });

  it('store() has no episodes and reads none, whatever episode events come', async () => {
    vi.useFakeTimers();
    const s = scripted();
    const store = createStores(s.source)();
    await flush();
    const first = store.getSnapshot();
    expect('episodes' in first).toBe(false);
    const before = s.reads.count;
    s.change([], undefined, [refOf(s.data.episodes[0]!), refOf(s.data.episodes[3]!)]);
    await flush();
    expect(s.reads.count).toBe(before);
    expect(s.reads.episodes).toEqual([]);
    expect(store.getSnapshot()).toBe(first);
  });

  it('one store per podcast, all on one read loop: a later one reads only its episodes, is not ready before, and shares the lists', async () => {
    vi.useFakeTimers();
    const s = scripted();
    const stores = createStores(s.source);
    const plain = stores();
    await flush();
    const before = s.reads.count;
    const p = stores(P);
    expect(stores(P)).toBe(p);
    expect(stores()).toBe(plain);
    expect(p).not.toBe(plain);
    // The lists are there at once; ready waits for its own episodes (no flash of an empty episode list).
    expect(p.getSnapshot()).toMatchObject({ ready: false, episodes: [] });
    expect(p.getSnapshot().subscriptions).toBe(plain.getSnapshot().subscriptions);
    await flush();
    expect(s.reads.count - before).toBe(1);
    expect(p.getSnapshot().ready).toBe(true);
    const q = stores(Q);
    await flush();
    // A list change is read once for every store.
    const reads = s.reads.subscriptions;
    s.data.subscriptions = [row('a', false), row('b'), row('c')];
    s.change(['a']);
    await flush();
    expect(s.reads.subscriptions - reads).toBe(1);
    expect(p.getSnapshot().subscriptions).toBe(plain.getSnapshot().subscriptions);
    expect(q.getSnapshot().subscriptions).toBe(plain.getSnapshot().subscriptions);
    expect(q.getSnapshot().episodes!.map((e) => e.episode)).toEqual([`${Q}/ep-1.mp3`]);
    expect(() => stores(42 as unknown as string)).toThrow(SyncError);
  });
});

describe('store() over the engine', () => {
  it('is ready with the cached list from IndexedDB while the network hangs', async () => {
    const s = await server({ seed: 3 });
    const first = engine(s);
    await first.sync();
    await first.close();
    let requests = 0;
    // A server that never answers: what the store shows comes from the local database alone.
    const hanging = ((_: unknown, init?: RequestInit) => {
      requests++;
      return new Promise<Response>((_, reject) => init?.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))));
    }) as typeof fetch;
    const e = engine(s, { dbName: first.dbName, fetch: hanging });
    const store = createStores(e)();
    const snap = await until(() => (store.getSnapshot().ready ? store.getSnapshot() : undefined), 5000, 'ready');
    expect(snap.subscriptions.map((r) => r.guid).sort()).toEqual(s.state().map((x) => x.guid).sort());
    expect(requests).toBeLessThanOrEqual(1);
  });

  it('shows local edits, the queue with feed URLs, other tabs\' edits, and pushes', async () => {
    const s = await server({ seed: 3 });
    const a = engine(s);
    await a.sync();
    const b = engine(s, { dbName: a.dbName });
    const store = createStores(a)();
    await until(() => store.getSnapshot().subscriptions.length === 3, 5000, 'the list');
    const before = store.getSnapshot();
    const [x, y] = before.subscriptions;
    // Both offline: whichever tab leads would push the queue (the other tab may lead: it opened while this one synced).
    a.setOnline(false);
    b.setOnline(false);
    await a.update(x!.guid, { isSubscribed: false });
    // An edit in the other tab reaches this tab's store.
    await b.update(y!.guid, { isSubscribed: false });
    const snap = await until(() => {
      const now = store.getSnapshot();
      return now.pending.length === 2 && now.subscriptions.every((r) => r.pending === (r.guid !== before.subscriptions[2]!.guid)) ? now : undefined;
    }, 5000, 'both edits');
    expect(snap.subscriptions[2]).toBe(before.subscriptions[2]);
    expect(snap.pending.map((p) => [p.guid, p.feedUrl])).toEqual([
      [x!.guid, x!.feedUrl],
      [y!.guid, y!.feedUrl],
    ]);
    a.setOnline(true);
    b.setOnline(true);
    await settle(a);
    await until(() => store.getSnapshot().pending.length === 0 && store.getSnapshot().subscriptions.every((r) => !r.pending), 5000, 'the push');
  });

  it('re-reads only the rows an edit names, and its list stays what subscriptions() gives (guid changes, removals, adds)', async () => {
    const s = await server({ seed: 6 });
    const e = engine(s);
    await e.sync();
    const asked: (string[] | undefined)[] = [];
    const store = createStores({ ...e, on: e.on, subscriptions: (filter) => (asked.push(filter?.guids), e.subscriptions(filter)) })();
    await until(() => store.getSnapshot().subscriptions.length === 6, 5000, 'the list');
    const [x, y] = await e.subscriptions();
    e.setOnline(false);
    asked.length = 0;
    await e.update(x!.guid, { guid: 'zz-renamed' });
    await e.remove(y!.guid);
    await e.add('https://added.example/feed', { guid: '00-added' });
    const expected = await e.subscriptions();
    await until(() => JSON.stringify(store.getSnapshot().subscriptions) === JSON.stringify(expected), 5000, 'the same list');
    // Each read names rows (a burst's coalesced into one): the four keys the edits touched at most, never the whole list.
    expect(asked.filter((guids) => guids === undefined || guids.length > 4)).toEqual([]);
  });

  it('shows a retried change\'s attempts and error (a queue change with no change to the list)', async () => {
    const s = await server({ seed: 2 });
    const e = engine(s, { retry: { baseDelay: 60_000, maxDelay: 60_000 } });
    await e.sync();
    const store = createStores(e)();
    const guid = s.state()[0]!.guid;
    s.failNext(1, 503, { method: 'PATCH' });
    await e.update(guid, { isSubscribed: false });
    const snap = await until(() => (store.getSnapshot().pending[0]?.attempts === 1 ? store.getSnapshot() : undefined), 5000, 'the attempt');
    expect(snap.pending[0]!.lastError).toMatchObject({ status: 503 });
  });

  it('makes far fewer snapshots than rows during a 10,000-row first sync', async () => {
    const s = await server({ seed: 10_000 });
    const e = engine(s);
    const store = createStores(e)();
    let snapshots = 0;
    store.subscribe(() => snapshots++);
    await until(() => store.getSnapshot().ready, 5000, 'ready');
    await e.sync();
    await until(() => store.getSnapshot().subscriptions.length === 10_000, 10_000, 'the list');
    expect(snapshots).toBeLessThan(200);
  });

  it('store({ podcast }) over the engine (gPodder): local edits and another tab\'s reach it, unchanged rows keep their identity', async () => {
    const g = await startGpodderServer({ port: 0, dialect: 'opodsync' });
    try {
      const gpodder = { protocol: 'nextcloud', auth: { type: 'basic', username: 'alice', password: 'alice-password' }, device: 'web-player' } as const;
      const a = engine(g, gpodder);
      const b = engine(g, { ...gpodder, dbName: a.dbName });
      a.setOnline(false);
      b.setOnline(false);
      const stores = createStores(a);
      const plain = stores();
      const store = stores(P);
      await until(() => store.getSnapshot().ready, 5000, 'ready');
      expect(store.getSnapshot().episodes).toEqual([]);
      await a.setProgress({ podcast: P, episode: `${P}/ep-1.mp3`, guid: 'p1' }, { position: 1, total: 300 });
      await a.markPlayed({ podcast: P, episode: `${P}/ep-1.mp3`, guid: 'p1' });
      const first = await until(() => (store.getSnapshot().episodes!.length === 1 ? store.getSnapshot() : undefined), 5000, 'the edit');
      expect(first.episodes![0]).toMatchObject({ played: true, pending: true, guid: 'p1' });
      // Another podcast's edit, then another tab's edit of this podcast.
      await a.setProgress({ podcast: Q, episode: `${Q}/ep-1.mp3` }, { position: 300, total: 300 });
      await b.setProgress({ podcast: P, episode: `${P}/ep-2.mp3`, guid: 'p2' }, { position: 60, total: 600 });
      const second = await until(() => (store.getSnapshot().episodes!.length === 2 ? store.getSnapshot() : undefined), 5000, 'the other tab\'s edit');
      expect(second.episodes).toEqual(await a.episodes({ podcast: P }));
      expect(second.episodes!.find((e) => e.guid === 'p1')).toBe(first.episodes![0]);
      expect(second.episodes!.map((e) => e.podcast)).toEqual([P, P]);
      expect('episodes' in plain.getSnapshot()).toBe(false);
    } finally {
      await g.close();
    }
  });

  it('store({ podcast }) over OPA (no listening state): ready, with the list and no episodes', async () => {
    const s = await server({ seed: 3 });
    const e = engine(s);
    await e.sync();
    await expect(e.episodes({ podcast: P })).rejects.toMatchObject({ code: 'unsupported' });
    const store = createStores(e)(P);
    const snap = await until(() => (store.getSnapshot().ready ? store.getSnapshot() : undefined), 5000, 'ready');
    expect(snap.episodes).toEqual([]);
    expect(snap.subscriptions).toHaveLength(3);
  });

  it('client.store() is one store per options value, fed through the worker', async () => {
    const s = await server({ seed: 3 });
    const { port1, port2 } = new MessageChannel();
    exposeSyncEngine(port1 as never);
    const worker = Object.assign(port2, { terminate: () => (port2.close(), port1.close()) }) as unknown as Worker;
    const client = createSyncClient({ baseUrl: s.url, dbName: uniqueDb('store'), auth: { type: 'bearer', token: TOKEN }, pullInterval: 0, pushDelay: 0, worker });
    try {
      const store = client.store();
      expect(client.store()).toBe(store);
      expect(client.store({})).toBe(store);
      const episodes = client.store({ podcast: P });
      expect(client.store({ podcast: P })).toBe(episodes);
      expect(episodes).not.toBe(store);
      await client.sync();
      await until(() => store.getSnapshot().subscriptions.length === 3, 5000, 'the pulled list');
      expect(store.getSnapshot().status).toMatchObject({ network: 'online', online: true });
      expect('episodes' in store.getSnapshot()).toBe(false);
      // OPA has no listening state: the unsupported error crosses the worker boundary and the store still gets ready.
      await until(() => episodes.getSnapshot().subscriptions.length === 3 && episodes.getSnapshot().ready, 5000, 'the podcast store');
      expect(episodes.getSnapshot().episodes).toEqual([]);
    } finally {
      await client.close();
    }
  });
});
