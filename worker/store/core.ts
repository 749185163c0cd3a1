// What every part of the store shares: the database, its tables, and the one way to run a transaction.
import { Dexie } from 'dexie';
import { SyncError } from '../../src/errors.ts';
import type { SyncDatabase } from '../../src/schema.ts';
import { createWorkset, type Workset } from './workset.ts';

/** Keys of the `meta` table. */
export const META = {
  cursor: 'cursor',
  binding: 'binding',
  lastSuccess: 'lastSuccess',
  /** Changes whenever the store is wiped: a pull that began before must not store its cursor after. */
  epoch: 'epoch',
  /** Where the next pull's overlap may start (see `PullSink.tail`), written with the cursor. */
  tail: 'tail',
  /** What the transport keeps across restarts (gPodder: its uploads since the last pull). */
  transport: 'transport',
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
  /** Run `work` in one read-only transaction over the data tables. */
  read<T>(work: () => Promise<T>): Promise<T>;
}

/** Turn Dexie/IndexedDB failures into `SyncError`s (quota first: it is the one a user can act on). */
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
  return error;
}

/** Whether an error means the database went away under us (deleted or closed by another context). */
export function isClosedError(error: unknown): boolean {
  return error instanceof Dexie.DatabaseClosedError;
}

/** A fresh unit of work found a queued change: it is aborted and run again reading everything. */
class NotFresh extends Error {}

/** Create the core over an (unopened) database. */
export function createStoreCore(db: SyncDatabase): StoreCore {
  // `meta` only where it is used: status reads and the binding check then never wait behind an edit.
  const data = [db.subscriptions, db.outbox, db.aliases];
  const all = [...data, db.meta];
  return {
    db,
    async edit(work, fresh, meta = false) {
      const run = (assumeFresh: boolean) =>
        db.transaction('rw', meta ? all : data, async () => {
          // Another tab may have queued a change since the pull began: then nothing can be assumed absent. The
          // count is asked first but awaited last: a fresh unit of work reads nothing, so its rows are computed
          // and its writes issued while an earlier transaction still commits (see `pull` in engine/pull.ts).
          const queued = assumeFresh ? db.outbox.count() : undefined;
          const ws = createWorkset(db, fresh && assumeFresh ? (key) => !((fresh.pull.written.get(key) ?? Infinity) < fresh.batch) : undefined);
          const result = await work(ws);
          const changed = await ws.flush();
          // Whatever it wrote beyond the keys its batch claimed (nothing, as pulls write today) later batches read.
          if (fresh) for (const key of ws.written()) if (!fresh.pull.written.has(key)) fresh.pull.written.set(key, fresh.batch);
          if (queued && (await queued) !== 0) throw new NotFresh();
          return { result, changed };
        });
      try {
        try {
          return await run(fresh !== undefined);
        } catch (error) {
          if (!(error instanceof NotFresh)) throw error;
          return await run(false);
        }
      } catch (error) {
        throw storageError(error);
      }
    },
    async read(work) {
      try {
        return await db.transaction('r', data, work);
      } catch (error) {
        throw storageError(error);
      }
    },
  };
}
