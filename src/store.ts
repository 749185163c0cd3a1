// The reactive store: the engine's reads folded into frozen snapshots that a UI framework can render, one
// store per podcast asked for (plus the plain one), all fed by one read loop.
import { SyncError, isSyncError } from './errors.ts';
import { notify } from './notify.ts';
import { askRef, patchEpisodes, readEpisodes, type EpisodeReads } from './episode-rows.ts';
import { patchSorted } from './sorted.ts';
import type { ErrorInfo, Listener, SyncApi, SyncEvents, SyncSnapshot, SyncStatus, SyncStore, Unsubscribe } from './types.ts';

/** What the store reads from: the client (or the engine in-process). */
export type StoreSource = Pick<SyncApi, 'subscriptions' | 'pending' | 'failed' | 'status' | 'episode' | 'episodes'> & {
  on<E extends keyof SyncEvents>(event: E, listener: Listener<E>): () => void;
};

/** At most one snapshot per this many ms: a timer, since `requestAnimationFrame` stops in hidden tabs. */
const FRAME = 16;
// What the next read covers. Whose episodes: `podcasts`.
const SUBS = 1;
const QUEUE = 2;
/** Nothing to read by itself: the status an event brought, or the episodes of `podcasts`. */
const OTHER = 4;
/** The status, read at the start only: its events bring it after that. */
const STATUS = 8;
/** Up to this many changed rows are re-read alone (an edit, a small pull); more, and the whole list is. */
const FEW = 100;
/** A failed read is tried again after this, doubled each time up to `RETRY_MAX` ms. */
const RETRY = 250;
const RETRY_MAX = 30_000;
/** Elapsed time, never the wall clock: a device clock stepped back an hour must not hold the next snapshot an hour. */
const tick = () => performance.now();

type Data = Record<string, unknown>;

/** One store, a podcast's or the plain one (keyed by its podcast in `views`): its snapshot and listeners. */
interface View {
  snapshot: SyncSnapshot;
  /** One function per subscription, so the same listener subscribed twice is two subscriptions. */
  listeners: Set<(s: SyncSnapshot) => void>;
  store: SyncStore;
}

/** Plain data compared by value (the engine's reads are JSON-like). */
function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (!a || !b || typeof a !== 'object' || typeof b !== 'object') return false;
  // Lists by index: a long list's keys are not spelled out as strings. (A list and a record never meet here:
  // each place in a snapshot holds one or the other.)
  const [keys, others] = [a, b].map((x) => (Array.isArray(x) ? [...x.keys()] : Object.keys(x)));
  return keys!.length === others!.length && keys!.every((k) => same((a as Data)[k], (b as Data)[k]));
}

function freeze<T>(value: T): T {
  // A primitive counts as frozen.
  if (!Object.isFrozen(value)) {
    Object.values(value as object).forEach(freeze);
    Object.freeze(value);
  }
  return value;
}

/** `was` when `now` equals it, else `now` frozen. */
const keep = <T>(was: T | undefined, now: T): T => (same(was, now) ? was! : freeze(now));

/** A row of any list in a snapshot, by what tells it apart in its list: a queue entry's id, a subscription's guid, an episode's guid or else its URL. */
type Row = { id?: number; guid?: string; episode?: string };
const key = (row: Row) => row.id ?? row.guid ?? row.episode;

/** The new list (none: not read), with every row equal to one in the old list being that old (frozen) row; the old list itself when nothing changed. */
function share<T extends Row>(old: readonly T[], next: T[] | undefined): readonly T[] {
  if (!next) return old;
  const byKey = new Map(old.map((row) => [key(row), row]));
  const rows = next.map((row) => keep(byKey.get(key(row)), row));
  return keep(old, rows);
}

/**
 * Stores over `source`, one per podcast asked for (undefined: the plain store, with no episodes); they start
 * reading the local database at once. They share one read loop, so a podcast's store adds only the reads of
 * its episodes, and only when a change names one of them.
 */
export function createStores(source: StoreSource): (podcast?: string) => SyncStore {
  const views = new Map<string | undefined, View>();
  let dirty = SUBS | QUEUE | STATUS;
  // The guids to re-read; undefined: the whole list.
  let keys: Set<string> | undefined;
  /**
   * The podcasts whose episodes the next read covers: the few episodes changes named, each read alone and put
   * at its place (episode-rows.ts), or the whole list (a new store, many changes, a failed read).
   */
  let podcasts: EpisodeReads = new Map();
  let status: SyncStatus | undefined;
  // A read is due (its timer set) or under way.
  let busy = false;
  // When the last snapshot's read began (long ago, so the first one goes at once): a read that changed nothing
  // made no frame, so it holds back no later one. And how long the last read of the lists took (a status alone
  // is read in no time, which says nothing of the next read).
  let last = -FRAME;
  let took = 0;
  // Reads failed in a row (the retry's backoff), and its timer.
  let failures = 0;
  let retry: ReturnType<typeof setTimeout> | undefined;

  // One read at a time, the next one only after it: a slow read can never land after a newer one.
  const schedule = (parts: number) => {
    dirty |= parts;
    if (dirty && !busy) {
      busy = true;
      // A frame after the last snapshot's read began, less the time a read takes: this one's snapshot then lands
      // about a frame after that read began. A negative delay is none.
      setTimeout(read, last + FRAME - took - tick());
    }
  };

  /** Make `now` the view's snapshot unless it equals the current one (by value); true when it changed. */
  function publish(view: View, now: SyncSnapshot): boolean {
    const was = view.snapshot;
    // By value: a list `share` kept is the same object, so this compares the changed parts only.
    view.snapshot = keep(was, now);
    if (view.snapshot === was) return false;
    for (const fn of [...view.listeners]) notify(fn, view.snapshot);
    return true;
  }

  function view(podcast: string | undefined, snapshot: SyncSnapshot): View {
    const listeners: View['listeners'] = new Set();
    const created: View = {
      snapshot,
      listeners,
      store: {
        getSnapshot: () => created.snapshot,
        subscribe(listener) {
          const fn = (s: SyncSnapshot) => (typeof listener === 'function' ? listener(s) : listener.next(s));
          listeners.add(fn);
          notify(fn, created.snapshot);
          const off = (() => void listeners.delete(fn)) as Unsubscribe;
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
      // Nothing has answered yet: the engine is starting, and whether this tab leads is not known.
      status: { phase: 'starting', online: false, network: globalThis.navigator?.onLine === false ? 'offline' : 'unreachable', leader: false, pending: 0, failed: 0, pendingEpisodes: 0 },
    }),
  );

  async function read() {
    const began = tick();
    clearTimeout(retry);
    const parts = dirty;
    const only = keys;
    dirty = 0;
    keys = new Set();
    // Whose episodes to read, taken now: a change during the read marks them for the next one.
    const asked = podcasts;
    podcasts = new Map();
    try {
      const [subscriptions, pending, failed, , episodes] = await Promise.all([
        parts & SUBS ? source.subscriptions(only && { guids: [...only] }) : undefined,
        parts & QUEUE ? source.pending() : undefined,
        parts & QUEUE ? source.failed() : undefined,
        // Kept even when another read fails (a worker that failed to load still says so in its status).
        parts & STATUS ? source.status().then((first) => void (status ??= first)) : undefined,
        Promise.all(
          [...views.keys()].map(
            (podcast) =>
              asked.has(podcast) ? readEpisodes(source, podcast!, asked.get(podcast)) : undefined,
          ),
        ),
      ]);
      failures = 0;
      const old = main.snapshot;
      // An event that came during the read is newer than what the read asked for.
      const latest = status ?? old.status;
      const next: SyncSnapshot = {
        ready: true,
        // The changed rows applied in place, in the engine's order (IndexedDB's: by guid, each once).
        subscriptions: subscriptions && only ? patchSorted(old.subscriptions, only, subscriptions, keep) : share(old.subscriptions, subscriptions),
        pending: share(old.pending, pending),
        failed: share(old.failed, failed),
        status: keep(old.status, latest),
      };
      // Every store, also one made during the read (at the end of `views`: it gets the new lists now, its episodes at the next read).
      [...views].forEach(([podcast, view], i) => {
        const fresh = episodes[i];
        const was = view.snapshot;
        const now: SyncSnapshot =
          view === main
            ? next
            : {
                ...next,
                // Ready once its own episodes were read too.
                ready: was.ready || !!fresh,
                episodes: fresh && !Array.isArray(fresh) ? patchEpisodes(was.episodes!, podcast!, fresh, keep) : share(was.episodes!, fresh),
              };
        if (publish(view, now)) {
          last = began;
          if (parts & (SUBS | QUEUE)) took = tick() - began;
        }
      });
    } catch (e) {
      // The database went away, the worker restarted: shown in every store, and tried again (the whole list,
      // whatever was asked) with backoff. A closed client, or a worker that never loaded, answers no read again.
      const error: ErrorInfo = isSyncError(e) ? { code: e.code, message: e.message } : { code: 'storage', message: String(e) };
      for (const view of views.values()) publish(view, { ...view.snapshot, status: status ?? view.snapshot.status, error });
      dirty |= parts;
      keys = undefined;
      for (const podcast of asked.keys()) podcasts.set(podcast, undefined);
      busy = false;
      if (error.code !== 'closed' && error.code !== 'unsupported') retry = setTimeout(() => schedule(0), Math.min(RETRY_MAX, RETRY * 2 ** failures++));
      return;
    }
    busy = false;
    schedule(0);
  }

  source.on('change', ({ guids, queue, episodes = [], everything }) => {
    for (const guid of guids) keys?.add(guid);
    if (everything || (keys && keys.size > FEW)) keys = undefined;
    if (everything) for (const podcast of views.keys()) if (podcast !== undefined) podcasts.set(podcast, undefined);
    let parts = (guids.length || everything ? SUBS | QUEUE | OTHER : 0) | (queue ? QUEUE : 0);
    for (const ref of episodes) {
      if (views.has(ref.podcast)) {
        askRef(podcasts, ref);
        parts |= OTHER;
      }
    }
    schedule(parts);
  });
  source.on('status', (payload) => {
    status = payload;
    schedule(OTHER);
  });
  schedule(0);

  return (podcast) => {
    if (podcast !== undefined && typeof podcast !== 'string') throw new SyncError('invalid', 'podcast must be a feed URL');
    let found = views.get(podcast);
    if (!found) {
      found = view(podcast, freeze({ ...main.snapshot, ready: false, episodes: [] }));
      podcasts.set(podcast, undefined);
      schedule(OTHER);
    }
    return found.store;
  };
}
