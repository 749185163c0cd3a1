// What every part of the store shares: the database, its tables, and the one way to run a transaction.
import { Dexie, type DBCore, type Middleware, type Table } from 'dexie';
import { SyncError } from '../../src/errors.ts';
import type { StoredChange, SyncDatabase } from '../../src/schema.ts';
import type { EpisodeRef } from '../../src/types.ts';
import { judge, type Binding, type Guard, type Owner } from './claim.ts';
import { createWorkset, type Workset } from './workset.ts';
import type { FeedsMoved } from './workset-state.ts';

/** What the floor above plugs into the store: what follows a feed URL that moves, and who hears of it once committed. */
export interface FeedMoveHooks {
  /** Re-key what belongs to the feeds a unit of work moved, in its transaction (the engine wires episodes/move.ts). */
  feedsMoved?: FeedsMoved;
  /** Episodes a committed unit of work moved with their feed. */
  onMoved?(episodes: EpisodeRef[]): void;
  /**
   * Where a page holds a last copy of this engine's queue (every tab's holds all of it): its build, which a local
   * edit runs in its own transaction and tells once committed. Every queued change a unit of work writes that
   * the copy may carry (`copies`) is then `copied`, since the page may send it as it goes.
   */
  copy?(): (() => Promise<() => void>) | undefined;
  /** Which changes the copy may carry (the transport's `copies`); absent: every one. */
  copies?: ((change: StoredChange) => boolean) | undefined;
}

/** Keys of the `meta` table. */
export const META = {
  cursor: 'cursor',
  /** Completed pulls (written with the cursor): a change handed out before the last one has had the server's word since. */
  pulls: 'pulls',
  binding: 'binding',
  lastSuccess: 'lastSuccess',
  /** Changes whenever the store is wiped: a run that began before writes nothing after (see `Guard`). */
  epoch: 'epoch',
  /** Where the next pull's overlap may start (see `PullSink.tail`), written with the cursor. */
  tail: 'tail',
  /** What the transport keeps across restarts (gPodder: its uploads since the last pull). */
  transport: 'transport',
  /** Set by `clear()` (a sign-out): no background run binds the store again, only the app's own use. */
  signedOut: 'signedOut',
} as const;

/**
 * A pull that began on an empty store: only what it wrote itself can exist (see `createWorkset`). Each batch
 * claims the keys it may write when it is handed over, before its transaction, so a batch queued behind it
 * reads those keys instead of assuming them absent.
 */
export interface FreshPull {
  /** Key → the first batch that may write it. */
  written: Map<string, number>;
  /** Batches handed over so far. */
  batches: number;
}

/** One batch of a fresh pull: keys first claimed by an earlier batch are read, the rest assumed absent. */
export interface FreshBatch {
  pull: FreshPull;
  batch: number;
}

/** An edit's result and the guids whose view it changed. */
export interface Edited<T> {
  result: T;
  changed: string[];
}

/** The database and its transaction helpers, shared by the store's parts. */
export interface StoreCore {
  readonly db: SyncDatabase;
  /** Run `work` in one read-write transaction over the data tables (and `meta` when asked), through a unit of work. */
  edit<T>(work: (ws: Workset) => Promise<T>, fresh?: FreshBatch, meta?: boolean): Promise<Edited<T>>;
  /** Whether a page holds a last copy of the queue that may carry `change` (see `FeedMoveHooks.copy`). */
  copying(change: StoredChange): boolean;
  /** Run `work` in one read-only transaction over the data tables. */
  read<T>(work: () => Promise<T>): Promise<T>;
  /** Run several reads in one read-only transaction over every table: the reads inside join it, its guard checked once. */
  together<T>(work: () => Promise<T>): Promise<T>;
  /** Run `work` in one transaction over `tables`: every access to the database goes through here (see `createStoreCore`). */
  transact<T>(mode: 'r' | 'rw', tables: Table[], work: () => Promise<T>): Promise<T>;
  /** The same core whose every transaction checks `guard` inside itself (see `Guard`). */
  guarded(guard: Guard): StoreCore;
  /** The same core without a guard: binding and wiping the store are what guards check. */
  readonly unguarded: StoreCore;
}

/**
 * Turn Dexie/IndexedDB failures into `SyncError`s: `closed`, `quota` (the one a user can act on), and every
 * other failure of the browser's storage as `storage`, the original kept as `cause`. Anything else (a bug in
 * the engine) is left as it is, to be seen as one.
 */
export function storageError(error: unknown): unknown {
  if (error instanceof SyncError) return error;
  // close() (or another context deleting the database) cut the transaction off: whether it committed is
  // unknown to the caller, as with any cut-off request.
  if (isClosedError(error)) return new SyncError('closed', 'the engine or its database was closed', { cause: error });
  const names: string[] = [];
  let e: unknown = error;
  for (let i = 0; i < 4 && e && typeof e === 'object'; i++) {
    names.push(String((e as { name?: unknown }).name));
    e = (e as { inner?: unknown }).inner;
  }
  if (names.some((n) => n === 'QuotaExceededError' || n === 'QuotaExceeded')) {
    return new SyncError('quota', 'the browser refused to store more data (storage quota exceeded)', { cause: error });
  }
  if (error instanceof Dexie.DexieError || (typeof DOMException === 'function' && error instanceof DOMException)) {
    const name = names.find((n) => n !== 'undefined' && n !== 'Error') ?? 'Error';
    const message = error instanceof Error ? error.message : String(error);
    return new SyncError('storage', `the browser's storage failed (${name}): ${message}`, { cause: error });
  }
  return error;
}

/** Whether an error means the database went away under us (deleted or closed by another context). */
export function isClosedError(error: unknown): boolean {
  return error instanceof Dexie.DatabaseClosedError;
}

/** A fresh unit of work found a queued change: it is aborted and run again reading everything. */
class NotFresh extends Error {}

/**
 * Counts this connection's IndexedDB transactions from their creation until `complete` or `abort` (which
 * Dexie's own promises do not wait for after a failure), and tells when none is left.
 */
function trackTransactions(db: SyncDatabase): () => Promise<void> {
  let live = 0;
  let waiting: (() => void)[] = [];
  const tracker: Middleware<DBCore> = {
    stack: 'dbcore',
    name: 'opa-sync:transaction-tracker',
    // Closest to IndexedDB: every transaction any layer creates is counted.
    level: -3,
    create: (down) => ({
      ...down,
      transaction(stores, mode, options) {
        const tx = down.transaction(stores, mode, options) as unknown as IDBTransaction;
        live++;
        let ended = false;
        const end = () => {
          if (ended) return;
          ended = true;
          if (--live > 0) return;
          const resume = waiting;
          waiting = [];
          for (const go of resume) go();
        };
        tx.addEventListener('complete', end);
        tx.addEventListener('abort', end);
        return tx as never;
      },
    }),
  };
  db.use(tracker);
  return () => (live === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiting.push(resolve)));
}

/**
 * Whether this browser engine is WebKit (Safari, every iOS browser, WebKitGTK), whose IndexedDB must never
 * have two transactions of ours in flight (see `createStoreCore`). No feature tells a bug apart: the user
 * agent does. Chromium-based browsers say `AppleWebKit` too, but also `Chrome/`; iOS browsers are WebKit.
 */
export function isWebKit(userAgent = globalThis.navigator?.userAgent ?? ''): boolean {
  return /AppleWebKit\//.test(userAgent) && !/\b(?:Chrome|Chromium|HeadlessChrome)\//.test(userAgent);
}

/**
 * Create the core over an (unopened) database; `hooks` says what follows a feed that moves (see `FeedMoveHooks`).
 *
 * In WebKit (`serial`) the engine's transactions run one at a time, each after the one before has completed
 * or aborted. When a worker ends (terminate(), a reload, a closed tab) while it has two IndexedDB transactions
 * in flight, read-only or read-write, even on different tables, WebKit (2.50, and the Safari it stands for)
 * leaves the database unable to run any transaction for every later connection, reloads and new tabs
 * included: they neither complete nor fail (https://bugs.webkit.org/show_bug.cgi?id=324094). With one at a
 * time, however the worker ends, it holds at most one, and one is released cleanly. (Dexie's schema check on
 * opening, a transaction without requests, is the one outside this.) Elsewhere transactions overlap: a pull's
 * pages queue behind each other and reads do not wait behind edits.
 */
export function createStoreCore(db: SyncDatabase, serial = isWebKit(), hooks: FeedMoveHooks = {}): StoreCore {
  // `meta` only where it is used: another tab's status reads never wait behind an unguarded edit. `episodes`:
  // a subscription's feed URL that moves takes its listening state along (see episodes/move.ts).
  const data = [db.subscriptions, db.outbox, db.aliases, db.episodes];
  const all = [...data, db.meta];
  const idle = serial ? trackTransactions(db) : () => Promise.resolve();
  let turn: Promise<unknown> = Promise.resolve();
  /** The transactions this core opened, and the guard each checks (see `together`). */
  const opened = new WeakMap<object, Guard | undefined>();

  /**
   * Run `work` checking `guard` inside the same transaction: a refusal throws, which aborts it whole. The guard's
   * read goes with the work's own (requests in one transaction pipeline: one round trip for both), and the
   * verdict comes before anything commits. Only a claim whose work reads `meta` (where the claim writes the
   * binding and the epoch) waits for the verdict first.
   */
  async function checked<T>(guard: Guard, mode: 'r' | 'rw', work: () => Promise<T>, readsMeta: boolean): Promise<T> {
    // Asked first: a run's batch issues its writes while an earlier one still commits, and checks before its own commits.
    const owner: Promise<Owner> = db.meta.bulkGet([META.binding, META.epoch, META.signedOut]).then(([binding, epoch, signedOut]) => ({
      binding: binding?.value as Binding | undefined,
      epoch: typeof epoch?.value === 'string' ? epoch.value : undefined,
      signedOut: signedOut?.value === true,
    }));
    /** The verdict on the store's owner: a refusal throws; a claim is recorded (in a read-write transaction). */
    const verdict = async () => {
      const found = await owner;
      const said = judge(guard, found, db.name);
      if (said instanceof SyncError) throw said;
      if (said === 'claim' && mode === 'rw') {
        await db.meta.put({ key: META.binding, value: guard.binding });
        if (found.signedOut) await db.meta.delete(META.signedOut);
        if (found.epoch === undefined) await db.meta.put({ key: META.epoch, value: crypto.randomUUID() });
      }
    };
    if (guard.kind === 'claim' && mode === 'rw' && readsMeta) {
      await verdict();
      return work();
    }
    let result: T;
    try {
      result = await work();
    } catch (error) {
      // The store is another's, or changed under a run: that, not what it did to the work, is the reason.
      const said = judge(guard, await owner, db.name);
      throw said instanceof SyncError ? said : error;
    }
    await verdict();
    return result;
  }

  function make(guard: Guard | undefined): StoreCore {
    function transact<T>(mode: 'r' | 'rw', tables: Table[], work: () => Promise<T>): Promise<T> {
      // Inside a transaction of this core that covers the call, checked with the same guard (or none is asked:
      // `together`): the work's requests join it as they are, with no transaction or check of their own.
      const outer = Dexie.currentTransaction;
      if (outer && opened.has(outer) && (!guard || opened.get(outer) === guard) && (outer.mode === 'readwrite' || mode === 'r') && tables.every((t) => outer.storeNames.includes(t.name))) {
        return (async () => work())().catch((error: unknown) => Promise.reject(storageError(error)));
      }
      // A local edit (a claim's write) builds the page's copy in its own transaction (over every table), so the
      // copy with it is told before it resolves, not read after whatever was queued behind it.
      const copy = guard?.kind === 'claim' && mode === 'rw' ? hooks.copy?.() : undefined;
      const scope = copy ? all : guard && !tables.includes(db.meta) ? [...tables, db.meta] : tables;
      let tell: (() => void) | undefined;
      // An `async` wrapper: Dexie keeps its transaction across native awaits only in scope functions it sees are async.
      const run = () =>
        db.transaction(mode, scope, async () => {
          if (Dexie.currentTransaction) opened.set(Dexie.currentTransaction, guard);
          const result = await (guard ? checked(guard, mode, work, tables.includes(db.meta)) : work());
          tell = await copy?.();
          return result;
        });
      // Called inside one of these transactions (the store's parts do not, but a nested call must not wait for
      // the transaction it runs in): Dexie runs it in that transaction.
      const direct = !serial || Dexie.currentTransaction;
      const result = direct ? run() : turn.then(run);
      if (!direct) turn = result.then(idle, idle);
      return result.then(
        (value) => (tell?.(), value),
        (error: unknown) => Promise.reject(storageError(error)),
      );
    }

    const core: StoreCore = {
      db,
      copying: (change) => !!hooks.copy?.() && hooks.copies?.(change) !== false,
      transact,
      async edit(work, fresh, meta = false) {
        /** Episodes the committed run moved with their feed. */
        let moved: EpisodeRef[] = [];
        const run = (assumeFresh: boolean) =>
          transact('rw', meta ? all : data, async () => {
            // Another tab may have queued a change since the pull began: then nothing can be assumed absent. The
            // count is asked first but awaited last: a fresh unit of work reads nothing, so its rows are computed
            // and its writes issued while an earlier transaction still commits (see `pull` in engine/pull.ts).
            const queued = assumeFresh ? db.outbox.count() : undefined;
            const ws = createWorkset(db, fresh && assumeFresh ? (key) => !((fresh.pull.written.get(key) ?? Infinity) < fresh.batch) : undefined, hooks.feedsMoved, core.copying);
            const result = await work(ws);
            const changed = await ws.flush();
            moved = ws.moved();
            // Whatever it wrote beyond the keys its batch claimed (nothing, as pulls write today) later batches read.
            if (fresh) for (const key of ws.written()) if (!fresh.pull.written.has(key)) fresh.pull.written.set(key, fresh.batch);
            if (queued && (await queued) !== 0) throw new NotFresh();
            return { result, changed };
          });
        const done = await run(fresh !== undefined).catch((error: unknown) => {
          if (!(error instanceof NotFresh)) throw error;
          return run(false);
        });
        // Committed: the episodes that moved with a feed are told (the edit's own caller tells its guids).
        if (moved.length) hooks.onMoved?.(moved);
        return done;
      },
      read(work) {
        return transact('r', data, work);
      },
      together(work) {
        return transact('r', all, work);
      },
      guarded: (next) => make(next),
      get unguarded() {
        return guard ? make(undefined) : core;
      },
    };
    return core;
  }

  return make(undefined);
}
