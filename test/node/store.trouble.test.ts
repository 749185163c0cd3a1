// The reactive store when things go wrong on the page's side (issue 25): a device clock that steps (pacing is
// measured on the monotonic clock), reads that fail (retried with backoff, the error in the snapshot), and the
// first snapshot, before the engine said anything (starting, not online, not "another tab syncs").
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SyncError } from '../../src/errors.ts';
import { createStores, type StoreSource } from '../../src/store.ts';
import type { ChangeEvent, Subscription, SyncSnapshot, SyncStatus } from '../../src/types.ts';

const row = (guid: string, isSubscribed = true): Subscription => ({ guid, feedUrl: `https://${guid}.example/feed`, isSubscribed, pending: false });
const idle: SyncStatus = { phase: 'idle', online: true, network: 'online', leader: true, pending: 0, failed: 0, pendingEpisodes: 0 };

/** A source over `rows`; `fail` makes the next reads of the list reject with it (a count, or every one). */
function source() {
  const state = { rows: [row('a'), row('b')], fail: undefined as SyncError | undefined, failures: 0, reads: 0, status: idle };
  const listeners = { change: new Set<(e: ChangeEvent) => void>(), status: new Set<(s: SyncStatus) => void>() };
  const src: StoreSource = {
    async subscriptions(filter) {
      state.reads++;
      if (state.fail && state.failures > 0) {
        state.failures--;
        throw state.fail;
      }
      return structuredClone(state.rows.filter((r) => !filter?.guids || filter.guids.includes(r.guid)));
    },
    pending: async () => [],
    failed: async () => [],
    status: async () => structuredClone(state.status),
    episode: async () => undefined,
    episodes: async () => [],
    on(event, listener) {
      const set = listeners[event] as Set<typeof listener>;
      set.add(listener);
      return () => void set.delete(listener);
    },
  };
  return {
    state,
    src,
    change: (guids: string[]) => listeners.change.forEach((l) => l({ guids })),
    status: (s: SyncStatus) => listeners.status.forEach((l) => l(s)),
    flip(guid: string) {
      state.rows = state.rows.map((r) => (r.guid === guid ? { ...r, isSubscribed: !r.isSubscribed } : r));
      listeners.change.forEach((l) => l({ guids: [guid] }));
    },
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('store pacing on a device clock that steps', () => {
  for (const step of [-3_600_000, -86_400_000, 3_600_000]) {
    it(`shows an edit within a frame after the wall clock steps ${step > 0 ? '+' : ''}${step / 3_600_000} h (the monotonic clock does not)`, async () => {
      vi.useFakeTimers();
      const s = source();
      const store = createStores(s.src)();
      await vi.advanceTimersByTimeAsync(20);
      expect(store.getSnapshot().ready).toBe(true);
      // A snapshot just now: the next one is paced a frame after it.
      s.flip('a');
      await vi.advanceTimersByTimeAsync(1);
      expect(store.getSnapshot().subscriptions[0]!.isSubscribed).toBe(false);
      // The device clock steps (NTP, the user, a restored VM): Date.now() jumps, performance.now() does not.
      const before = performance.now();
      vi.setSystemTime(Date.now() + step);
      expect(performance.now()).toBe(before);
      s.flip('b');
      await vi.advanceTimersByTimeAsync(20);
      expect(store.getSnapshot().subscriptions[1]!.isSubscribed).toBe(false);
      // And on: every later edit too.
      s.flip('a');
      await vi.advanceTimersByTimeAsync(20);
      expect(store.getSnapshot().subscriptions[0]!.isSubscribed).toBe(true);
    });
  }
});

describe('a read that fails', () => {
  it('is shown in the snapshot (error beside ready) and tried again with backoff, with no event needed', async () => {
    vi.useFakeTimers();
    const s = source();
    s.state.fail = new SyncError('storage', 'UnknownError: the database went away');
    s.state.failures = 3;
    const store = createStores(s.src)();
    const seen: SyncSnapshot[] = [];
    store.subscribe((snap) => seen.push(snap));
    await vi.advanceTimersByTimeAsync(1);
    expect(store.getSnapshot()).toMatchObject({ ready: false, error: { code: 'storage', message: 'UnknownError: the database went away' } });
    expect(store.getSnapshot().subscriptions).toEqual([]);
    // The status read apart from the failed one still shows.
    expect(store.getSnapshot().status).toEqual(idle);
    // Backoff: 250 ms, then 500, then 1000.
    await vi.advanceTimersByTimeAsync(240);
    expect(s.state.reads).toBe(1);
    await vi.advanceTimersByTimeAsync(20);
    expect(s.state.reads).toBe(2);
    await vi.advanceTimersByTimeAsync(480);
    expect(s.state.reads).toBe(2);
    await vi.advanceTimersByTimeAsync(40);
    expect(s.state.reads).toBe(3);
    await vi.advanceTimersByTimeAsync(1100);
    expect(s.state.reads).toBe(4);
    const snap = store.getSnapshot();
    expect(snap.ready).toBe(true);
    expect('error' in snap).toBe(false);
    expect(snap.subscriptions.map((r) => r.guid)).toEqual(['a', 'b']);
    // One snapshot for the failure, not one per failed attempt (the same error), then the list.
    expect(seen.map((x) => [x.ready, x.error?.code])).toEqual([
      [false, undefined],
      [false, 'storage'],
      [true, undefined],
    ]);
  });

  it('after being ready: the list stays, the error shows, and the next read that succeeds clears it', async () => {
    vi.useFakeTimers();
    const s = source();
    const store = createStores(s.src)();
    await vi.advanceTimersByTimeAsync(20);
    const ready = store.getSnapshot();
    s.state.fail = new SyncError('storage', 'a worker restart');
    s.state.failures = 1;
    s.flip('a');
    await vi.advanceTimersByTimeAsync(1);
    expect(store.getSnapshot()).toMatchObject({ ready: true, error: { code: 'storage' } });
    expect(store.getSnapshot().subscriptions).toBe(ready.subscriptions);
    await vi.advanceTimersByTimeAsync(300);
    expect('error' in store.getSnapshot()).toBe(false);
    expect(store.getSnapshot().subscriptions[0]!.isSubscribed).toBe(false);
  });

  it('a plain Error (not a SyncError) is a storage error', async () => {
    vi.useFakeTimers();
    const s = source();
    s.state.fail = new DOMException('Connection to Indexed Database server lost', 'UnknownError') as unknown as SyncError;
    s.state.failures = 1;
    const store = createStores(s.src)();
    await vi.advanceTimersByTimeAsync(1);
    expect(store.getSnapshot().error).toMatchObject({ code: 'storage', message: expect.stringContaining('Connection to Indexed Database server lost') });
  });

  for (const code of ['closed', 'unsupported'] as const) {
    it(`is not tried again after ${code} (no read can succeed), and still shows the status`, async () => {
      vi.useFakeTimers();
      const s = source();
      s.state.fail = new SyncError(code, code === 'closed' ? 'the client is closed' : 'the sync worker failed to load');
      s.state.failures = Infinity;
      if (code === 'unsupported') s.state.status = { ...idle, phase: 'unavailable', online: false, network: 'unreachable', leader: false, lastError: { code, message: 'the sync worker failed to load' } };
      const store = createStores(s.src)();
      await vi.advanceTimersByTimeAsync(60_000);
      expect(s.state.reads).toBe(1);
      expect(store.getSnapshot()).toMatchObject({ ready: false, error: { code }, status: { phase: s.state.status.phase } });
    });
  }
});

describe('the first snapshot', () => {
  it('says the engine is starting: not online, and not "another tab syncs"', () => {
    const s = source();
    const snap = createStores(s.src)().getSnapshot();
    expect(snap.ready).toBe(false);
    expect(snap.status.phase).toBe('starting');
    expect(snap.status.online).toBe(false);
    expect(snap.status.network).not.toBe('online');
  });
});
