// The store's bookkeeping: which server (and account, and protocol) it belongs to, the pull cursor, the
// epoch that tells a pull the store was wiped under it, and the time of the last successful sync.
import { SyncError } from '../../src/errors.ts';
import { META, type StoreCore } from './core.ts';

/** What a store is bound to: one server and, when given, one account and protocol. */
export interface Binding {
  server: string;
  account?: string;
  /** Absent in stores written before protocols existed: those are Open Podcast API stores. */
  protocol?: string;
}

const protocolOf = (binding: Binding): string => binding.protocol ?? 'opa';

/** The store's bookkeeping reads and writes. */
export function createMeta({ db, transact }: StoreCore) {
  const value = (key: string): Promise<unknown> => transact('r', [db.meta], async () => (await db.meta.get(key))?.value);
  return {
    /** Check (or record, on first use) which server, account and protocol this database belongs to. */
    async bind(binding: Binding): Promise<void> {
      await transact('rw', [db.meta], async () => {
        if (!(await db.meta.get(META.epoch))) await db.meta.put({ key: META.epoch, value: crypto.randomUUID() });
        const stored = (await db.meta.get(META.binding))?.value as Binding | undefined;
        if (!stored) {
          await db.meta.put({ key: META.binding, value: binding });
          return;
        }
        const accountClash = binding.account !== undefined && stored.account !== undefined && stored.account !== binding.account;
        if (stored.server !== binding.server || accountClash || protocolOf(stored) !== protocolOf(binding)) {
          const who = `${stored.server}${stored.account ? ` (account ${stored.account})` : ''}${stored.protocol ? ` over ${stored.protocol}` : ''}`;
          throw new SyncError('account-mismatch', `database "${db.name}" holds data of ${who}; call clear() to reuse it`);
        }
        if (binding.account !== undefined && stored.account === undefined) await db.meta.put({ key: META.binding, value: binding });
      });
    },

    /** Wipe everything, binding included: the store belongs to no one until its next use binds it again. */
    async clear(): Promise<void> {
      const tables = [db.subscriptions, db.outbox, db.aliases, db.meta];
      await transact('rw', tables, async () => {
        await Promise.all(tables.map((t) => t.clear()));
        await db.meta.put({ key: META.epoch, value: crypto.randomUUID() });
      });
    },

    /** What a pull starts from, in one read: cursor, tail, epoch, and (without a cursor) whether the store is empty. */
    async pullStart(): Promise<{ cursor?: number; tail?: number; epoch?: string; empty: boolean }> {
      return transact('r', [db.meta, db.subscriptions, db.aliases, db.outbox], async () => {
        const [cursor, tail, epoch] = (await db.meta.bulkGet([META.cursor, META.tail, META.epoch])).map((r) => r?.value);
        const out: { cursor?: number; tail?: number; epoch?: string; empty: boolean } = { empty: false };
        if (typeof cursor === 'number') out.cursor = cursor;
        if (typeof tail === 'number') out.tail = tail;
        if (typeof epoch === 'string') out.epoch = epoch;
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
