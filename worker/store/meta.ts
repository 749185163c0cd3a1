// The store's bookkeeping: which server (and account, and protocol) it belongs to, the pull cursor, the
// epoch that tells a run the store was wiped under it, and the time of the last successful sync.
import { META, type StoreCore } from './core.ts';
import type { Binding } from './claim.ts';

export type { Binding } from './claim.ts';

/** The store's bookkeeping reads and writes. */
export function createMeta(core: StoreCore) {
  const { db, transact } = core;
  const value = (key: string): Promise<unknown> => transact('r', [db.meta], async () => (await db.meta.get(key))?.value);
  return {
    /**
     * Check (or record, on first use) which server, account and protocol this database belongs to; resolves
     * with the store's epoch (what a run's writes check, see `Guard`), rejects with `account-mismatch`.
     */
    async bind(binding: Binding, background = false): Promise<string> {
      const claim = core.unguarded.guarded({ kind: 'claim', binding, background });
      return claim.transact('rw', [db.meta], async () => String((await db.meta.get(META.epoch))?.value));
    },

    /** Wipe everything, binding included: the store belongs to no one until its next use binds it again. */
    async clear(): Promise<void> {
      const tables = [db.subscriptions, db.outbox, db.aliases, db.meta, db.episodes];
      await core.unguarded.transact('rw', tables, async () => {
        await Promise.all(tables.map((t) => t.clear()));
        await db.meta.put({ key: META.epoch, value: crypto.randomUUID() });
        await db.meta.put({ key: META.signedOut, value: true });
      });
    },

    /** What a pull starts from, in one read: cursor, tail, and (without a cursor) whether the store is empty. */
    async pullStart(): Promise<{ cursor?: number; tail?: number; empty: boolean }> {
      return transact('r', [db.meta, db.subscriptions, db.aliases, db.outbox], async () => {
        const [cursor, tail] = (await db.meta.bulkGet([META.cursor, META.tail])).map((r) => r?.value);
        const out: { cursor?: number; tail?: number; empty: boolean } = { empty: false };
        if (typeof cursor === 'number') out.cursor = cursor;
        if (typeof tail === 'number') out.tail = tail;
        if (out.cursor === undefined) {
          const counts = await Promise.all([db.subscriptions.count(), db.aliases.count(), db.outbox.count()]);
          out.empty = counts.every((n) => n === 0);
        }
        return out;
      });
    },

    /** The stored cursor (server time, ms), if a pull ever completed. */
    async cursor(): Promise<number | undefined> {
      const v = await value(META.cursor);
      return typeof v === 'number' ? v : undefined;
    },

    /** How many pulls the store has completed (what a handout's `pull` is read against, see `mayGo`). */
    async pulls(): Promise<number> {
      const v = await value(META.pulls);
      return typeof v === 'number' ? v : 0;
    },

    /** Device time of the last successful sync. */
    async lastSuccess(): Promise<number | undefined> {
      const v = await value(META.lastSuccess);
      return typeof v === 'number' ? v : undefined;
    },

    /** What the transport asked to keep (see `Transport`); undefined when nothing was kept. */
    async transportMemo(): Promise<unknown> {
      return value(META.transport);
    },

    /** Keep a value for the transport across restarts (wiped by `clear()` with everything else). */
    async setTransportMemo(memo: unknown): Promise<void> {
      await transact('rw', [db.meta], () => db.meta.put({ key: META.transport, value: memo }));
    },

    /** Record a successful sync (device time, for display only). */
    async setLastSuccess(at: number): Promise<void> {
      await transact('rw', [db.meta], () => db.meta.put({ key: META.lastSuccess, value: at }));
    },
  };
}
