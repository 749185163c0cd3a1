// The reactive store: the engine's reads folded into one frozen snapshot that a UI framework can render.
import type { Listener, SyncApi, SyncEvents, SyncSnapshot, SyncStatus, SyncStore, Unsubscribe } from './types.ts';

/** What the store reads from: the client (or the engine in-process). */
export type StoreSource = Pick<SyncApi, 'subscriptions' | 'pending' | 'failed' | 'status'> & {
  on<E extends keyof SyncEvents>(event: E, listener: Listener<E>): () => void;
};

/** At most one snapshot per this many ms: a timer, since `requestAnimationFrame` stops in hidden tabs. */
const FRAME = 16;
// What the next read covers. Status needs no read: its event carries it.
const SUBS = 1;
const QUEUE = 2;
const STATUS = 4;
/** Up to this many changed rows are re-read alone (an edit, a small pull); more, and the whole list is. */
const FEW = 100;

type Data = Record<string, unknown>;

/** Plain data compared by value (the engine's reads are JSON-like). */
function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (!a || !b || typeof a !== 'object' || typeof b !== 'object') return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => same((a as Data)[k], (b as Data)[k]));
}

function freeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.values(value).forEach(freeze);
    Object.freeze(value);
  }
  return value;
}

/** The new list, with every row equal to one in the old list being that old (frozen) row; the old list itself when nothing changed. */
function share<T extends object>(old: readonly T[], next: T[], key: (row: T) => unknown): readonly T[] {
  const byKey = new Map(old.map((row) => [key(row), row]));
  const rows = next.map((row) => {
    const was = byKey.get(key(row));
    return was && same(was, row) ? was : freeze(row);
  });
  return rows.length === old.length && rows.every((row, i) => row === old[i]) ? old : freeze(rows);
}

/** Build a store over `source`; it starts reading the local database at once. */
export function createStore(source: StoreSource): SyncStore {
  const online = typeof navigator === 'undefined' || navigator.onLine !== false;
  let snapshot: SyncSnapshot = freeze({
    ready: false,
    subscriptions: [],
    pending: [],
    failed: [],
    status: { phase: 'idle', online, network: online ? 'online' : 'offline', leader: false, pending: 0, failed: 0, pendingEpisodes: 0 },
  });
  const listeners = new Set<{ fn: (s: SyncSnapshot) => void }>();
  let dirty = SUBS | QUEUE;
  // The guids to re-read; undefined: the whole list.
  let keys: Set<string> | undefined;
  let status: SyncStatus | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let reading = false;
  let last = -FRAME;

  // One read at a time, the next one only after it: a slow read can never land after a newer one.
  const schedule = (parts: number) => {
    dirty |= parts;
    if (timer === undefined && !reading) timer = setTimeout(read, Math.max(0, last + FRAME - Date.now()));
  };

  async function read() {
    timer = undefined;
    reading = true;
    last = Date.now();
    const parts = dirty;
    const only = keys;
    dirty = 0;
    keys = new Set();
    try {
      const [subscriptions, pending, failed, first] = await Promise.all([
        parts & SUBS ? source.subscriptions(only && { guids: [...only] }) : undefined,
        parts & QUEUE ? source.pending() : undefined,
        parts & QUEUE ? source.failed() : undefined,
        snapshot.ready || status ? undefined : source.status(),
      ]);
      const old = snapshot;
      const next: SyncSnapshot = {
        ready: true,
        subscriptions: subscriptions
          ? share(
              old.subscriptions,
              // The changed rows merged into the rest, in the engine's order (IndexedDB's: by guid).
              only ? [...old.subscriptions.filter((r) => !only.has(r.guid)), ...subscriptions].sort((a, b) => (a.guid < b.guid ? -1 : a.guid > b.guid ? 1 : 0)) : subscriptions,
              (r) => r.guid,
            )
          : old.subscriptions,
        pending: pending ? share(old.pending, pending, (c) => c.id) : old.pending,
        failed: failed ? share(old.failed, failed, (c) => c.id) : old.failed,
        // An event that came during the read is newer than what the read asked for.
        status: same(old.status, status ?? first) ? old.status : freeze(status ?? first ?? old.status),
      };
      if ((Object.keys(next) as (keyof SyncSnapshot)[]).some((k) => next[k] !== old[k])) {
        snapshot = freeze(next);
        for (const listener of [...listeners]) call(listener.fn, snapshot);
      }
    } catch {
      // Closed, or the database went away: the next event tries again.
      dirty |= parts;
      keys = only && keys && new Set([...only, ...keys]);
      reading = false;
      return;
    }
    reading = false;
    if (dirty) schedule(0);
  }

  source.on('change', ({ guids, queue }) => {
    for (const guid of guids) keys?.add(guid);
    if (keys && keys.size > FEW) keys = undefined;
    schedule((guids.length ? SUBS | QUEUE : 0) | (queue ? QUEUE : 0));
  });
  source.on('status', (payload) => {
    status = payload;
    schedule(STATUS);
  });
  schedule(0);

  return {
    getSnapshot: () => snapshot,
    subscribe(listener) {
      const entry = { fn: typeof listener === 'function' ? listener : (s: SyncSnapshot) => listener.next(s) };
      listeners.add(entry);
      call(entry.fn, snapshot);
      const off = (() => void listeners.delete(entry)) as Unsubscribe;
      off.unsubscribe = off;
      return off;
    },
  };
}

function call(fn: (s: SyncSnapshot) => void, snapshot: SyncSnapshot): void {
  try {
    fn(snapshot);
  } catch (error) {
    console.error('opa-sync: a listener threw', error);
  }
}
