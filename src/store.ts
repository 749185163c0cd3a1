// The reactive store: the engine's reads folded into frozen snapshots that a UI framework can render, one
// store per podcast asked for (plus the plain one), all fed by one read loop.
import { SyncError } from './errors.ts';
import type { Listener, SyncApi, SyncEvents, SyncSnapshot, SyncStatus, SyncStore, Unsubscribe } from './types.ts';

/** What the store reads from: the client (or the engine in-process). */
export type StoreSource = Pick<SyncApi, 'subscriptions' | 'pending' | 'failed' | 'status' | 'episodes'> & {
  on<E extends keyof SyncEvents>(event: E, listener: Listener<E>): () => void;
};

/** At most one snapshot per this many ms: a timer, since `requestAnimationFrame` stops in hidden tabs. */
const FRAME = 16;
// What the next read covers. Status needs no read: its event carries it. Whose episodes: each view's `want`.
const SUBS = 1;
const QUEUE = 2;
const STATUS = 4;
const EPISODES = 8;
/** Up to this many changed rows are re-read alone (an edit, a small pull); more, and the whole list is. */
const FEW = 100;

type Data = Record<string, unknown>;

/** One store: a podcast's (or the plain one, `podcast` undefined), its snapshot and listeners. */
interface View {
  podcast: string | undefined;
  snapshot: SyncSnapshot;
  listeners: Set<{ fn: (s: SyncSnapshot) => void }>;
  /**
   * Whether its episodes need a read. The whole podcast's list is read, never single refs: there is no read
   * by refs (each would be a round trip of its own), and merging single rows would repeat the engine's episode
   * identity rule (guid, else enclosure URL) in the page. One podcast's list is small and read by an index.
   */
  want: boolean;
  store: SyncStore;
}

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

const changed = (next: SyncSnapshot, old: SyncSnapshot) => (Object.keys(next) as (keyof SyncSnapshot)[]).some((k) => next[k] !== old[k]);

/**
 * Stores over `source`, one per podcast asked for (undefined: the plain store, with no episodes); they start
 * reading the local database at once. They share one read loop, so a podcast's store adds only the reads of
 * its episodes, and only when a change names one of them.
 */
export function createStores(source: StoreSource): (podcast?: string) => SyncStore {
  const online = typeof navigator === 'undefined' || navigator.onLine !== false;
  const views = new Map<string | undefined, View>();
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
    if (dirty && timer === undefined && !reading) timer = setTimeout(read, Math.max(0, last + FRAME - Date.now()));
  };

  function view(podcast: string | undefined, snapshot: SyncSnapshot): View {
    const listeners: View['listeners'] = new Set();
    const created: View = {
      podcast,
      snapshot,
      listeners,
      want: podcast !== undefined,
      store: {
        getSnapshot: () => created.snapshot,
        subscribe(listener) {
          const entry = { fn: typeof listener === 'function' ? listener : (s: SyncSnapshot) => listener.next(s) };
          listeners.add(entry);
          call(entry.fn, created.snapshot);
          const off = (() => void listeners.delete(entry)) as Unsubscribe;
          off.unsubscribe = off;
          return off;
        },
      },
    };
    views.set(podcast, created);
    return created;
  }

  // The plain store: the others are it plus their episodes.
  const main = view(
    undefined,
    freeze({
      ready: false,
      subscriptions: [],
      pending: [],
      failed: [],
      status: { phase: 'idle', online, network: online ? 'online' : 'offline', leader: false, pending: 0, failed: 0, pendingEpisodes: 0 },
    }),
  );

  async function read() {
    timer = undefined;
    reading = true;
    last = Date.now();
    const parts = dirty;
    const only = keys;
    dirty = 0;
    keys = new Set();
    // Whose episodes to read, taken now: a change during the read marks them for the next one.
    const asked = [...views.values()];
    const wanted = asked.map((view) => view.want);
    for (const view of asked) view.want = false;
    try {
      const [subscriptions, pending, failed, first, episodes] = await Promise.all([
        parts & SUBS ? source.subscriptions(only && { guids: [...only] }) : undefined,
        parts & QUEUE ? source.pending() : undefined,
        parts & QUEUE ? source.failed() : undefined,
        main.snapshot.ready || status ? undefined : source.status(),
        Promise.all(
          asked.map(
            (view, i) =>
              wanted[i] &&
              // A protocol with no listening state (OPA): no episodes, and the store still gets ready.
              source.episodes({ podcast: view.podcast! }).catch((error: SyncError) => (error?.code === 'unsupported' ? [] : Promise.reject(error))),
          ),
        ),
      ]);
      const old = main.snapshot;
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
      // Every store, also one made during the read (at the end of `views`: it gets the new lists now, its episodes at the next read).
      [...views.values()].forEach((view, i) => {
        const fresh = episodes[i];
        const was = view.snapshot;
        const list = was.episodes!;
        const now: SyncSnapshot =
          view === main
            ? next
            : {
                ...next,
                // Ready once its own episodes were read too.
                ready: was.ready || !!fresh,
                episodes: fresh ? share(list, fresh, (e) => e.guid ?? e.episode) : list,
              };
        if (changed(now, was)) {
          view.snapshot = freeze(now);
          for (const listener of [...view.listeners]) call(listener.fn, view.snapshot);
        }
      });
    } catch {
      // Closed, or the database went away: the next event tries again.
      dirty |= parts;
      keys = only && keys && new Set([...only, ...keys]);
      asked.forEach((view, i) => (view.want ||= wanted[i]!));
      reading = false;
      return;
    }
    reading = false;
    schedule(0);
  }

  source.on('change', ({ guids, queue, episodes = [] }) => {
    for (const guid of guids) keys?.add(guid);
    if (keys && keys.size > FEW) keys = undefined;
    let parts = (guids.length ? SUBS | QUEUE : 0) | (queue ? QUEUE : 0);
    for (const view of views.values()) {
      if (episodes.some((ref) => ref.podcast === view.podcast)) {
        view.want = true;
        parts |= EPISODES;
      }
    }
    schedule(parts);
  });
  source.on('status', (payload) => {
    status = payload;
    schedule(STATUS);
  });
  schedule(0);

  return (podcast) => {
    if (podcast !== undefined && typeof podcast !== 'string') throw new SyncError('invalid', 'podcast must be a feed URL');
    let found = views.get(podcast);
    if (!found) {
      found = view(podcast, freeze({ ...main.snapshot, ready: false, episodes: [] }));
      schedule(EPISODES);
    }
    return found.store;
  };
}

function call(fn: (s: SyncSnapshot) => void, snapshot: SyncSnapshot): void {
  try {
    fn(snapshot);
  } catch (error) {
    console.error('opa-sync: a listener threw', error);
  }
}
