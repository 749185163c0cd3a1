// The reactive store (`client.store()`): its contract on a scripted source (identity, no-op writes, coalescing,
// one read at a time), then over the real engine in-process and through the client over comlink.
import { MessageChannel } from 'node:worker_threads';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSyncClient } from '../../src/index.ts';
import { createStores, type StoreSource } from '../../src/store.ts';
import type { ChangeEvent, FailedChange, PendingChange, Subscription, SyncSnapshot, SyncStatus } from '../../src/types.ts';
import { exposeSyncEngine } from '../../worker/index.ts';
import { TOKEN, engine, server, settle, uniqueDb, until } from './helpers.ts';

const row = (guid: string, isSubscribed = true): Subscription => ({ guid, feedUrl: `https://${guid}.example/feed`, isSubscribed, pending: false });
const idle: SyncStatus = { phase: 'idle', online: true, network: 'online', leader: true, pending: 0, failed: 0, pendingEpisodes: 0 };

/** A source whose reads answer from `data` (copied, as comlink would), or wait while `hold` is set. */
function scripted() {
  const data = { subscriptions: [row('a'), row('b'), row('c')], pending: [] as PendingChange[], failed: [] as FailedChange[] };
  const listeners = { change: new Set<(e: ChangeEvent) => void>(), status: new Set<(s: SyncStatus) => void>() };
  const reads = { count: 0, inFlight: 0, maxInFlight: 0 };
  let hold: Promise<void> | undefined;
  const answer = async <T>(pick: () => T): Promise<T> => {
    reads.count++;
    reads.inFlight++;
    reads.maxInFlight = Math.max(reads.maxInFlight, reads.inFlight);
    // What the read sees is what the store held when it asked, even if it answers late.
    const value = structuredClone(pick());
    await hold;
    reads.inFlight--;
    return value;
  };
  const source: StoreSource = {
    subscriptions: (filter) => answer(() => data.subscriptions.filter((r) => !filter?.guids || filter.guids.includes(r.guid))),
    pending: () => answer(() => data.pending),
    failed: () => answer(() => data.failed),
    status: () => answer(() => idle),
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
    change: (guids: string[], queue?: true) => listeners.change.forEach((l) => l(queue ? { guids, queue } : { guids })),
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
    a.setOnline(false);
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

  it('client.store() is one store per client, fed through the worker', async () => {
    const s = await server({ seed: 3 });
    const { port1, port2 } = new MessageChannel();
    exposeSyncEngine(port1 as never);
    const worker = Object.assign(port2, { terminate: () => (port2.close(), port1.close()) }) as unknown as Worker;
    const client = createSyncClient({ baseUrl: s.url, dbName: uniqueDb('store'), auth: { type: 'bearer', token: TOKEN }, pullInterval: 0, pushDelay: 0, worker });
    try {
      const store = client.store();
      expect(client.store()).toBe(store);
      await client.sync();
      await until(() => store.getSnapshot().subscriptions.length === 3, 5000, 'the pulled list');
      expect(store.getSnapshot().status).toMatchObject({ network: 'online', online: true });
    } finally {
      await client.close();
    }
  });
});
