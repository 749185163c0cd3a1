// Reads of the local view and of the queue; they never write.
import type { StoredChange, StoredSubscription } from '../../src/schema.ts';
import type { SendItem } from '../transport.ts';
import type { FailedChange, PendingChange, Subscription, SubscriptionFilter } from '../../src/types.ts';
import type { StoreCore } from './core.ts';
import { toSubscription } from './view.ts';

const MAX_HOPS = 64;

/** Whether a row is part of the app's view: a local add the server refused has no server state and nothing live. */
export function visible(row: StoredSubscription): boolean {
  return row.base !== undefined || row.pending > 0;
}

/** The public shape of a queued change. */
export function toPending(change: StoredChange): PendingChange {
  const pending: PendingChange = {
    id: change.id!,
    kind: change.kind,
    guid: change.guid,
    createdAt: change.createdAt,
    attempts: change.attempts,
  };
  if (change.feedUrl !== undefined) pending.feedUrl = change.feedUrl;
  if (change.change !== undefined) pending.change = { ...change.change };
  if (change.deletionId !== undefined) pending.deletionId = change.deletionId;
  if (change.lastError !== undefined) pending.lastError = change.lastError;
  return pending;
}

/** The store's reads. */
export function createReads({ db, read, together }: StoreCore) {
  async function resolveKey(guid: string): Promise<string> {
    let current = guid;
    for (let hop = 0; hop < MAX_HOPS; hop++) {
      const alias = await db.aliases.get(current);
      if (!alias || alias.to === guid) return current;
      current = alias.to;
    }
    return current;
  }

  /**
   * Queue entries in their public shape, each `update`/`remove` with the feed URL of the row it is about (read
   * in the same transaction, so a UI can label it without a join): the server's when known, else the view's.
   */
  async function labelled<T extends PendingChange>(load: () => Promise<StoredChange[]>, shape: (c: StoredChange) => T): Promise<T[]> {
    return read(async () => {
      const list = await load();
      const rows = await db.subscriptions.bulkGet(list.map((c) => c.guid));
      return list.map((c, i) => {
        const out = shape(c);
        const row = rows[i];
        if (out.feedUrl === undefined && row) out.feedUrl = row.base?.feedUrl ?? row.feedUrl;
        return out;
      });
    });
  }

  /** The guid to address a change to on the server and the server's flag there, inside a read. */
  async function addressIn(change: StoredChange): Promise<{ guid: string; isSubscribed: boolean } | undefined> {
    const base = (await db.subscriptions.get(await resolveKey(change.guid)))?.base;
    // The row's server name now, not the one known when the change was queued: an OPA server follows a
    // chain from an old guid, but a gPodder URL stands alone (after a move, the old URL is another feed).
    if (base) return { guid: base.guid, isSubscribed: base.isSubscribed };
    return change.serverGuid === undefined ? undefined : { guid: change.serverGuid, isSubscribed: true };
  }

  async function pendingChanges(): Promise<StoredChange[]> {
    const list = await read(() => db.outbox.where('state').anyOf('queued', 'deleting').toArray());
    return list.sort((a, b) => a.id! - b.id!);
  }

  return {
    /** The local view. */
    async list(filter: SubscriptionFilter = {}): Promise<Subscription[]> {
      const { guids } = filter;
      const rows = await read(async () => (guids ? (await db.subscriptions.bulkGet(guids)).filter((row) => row !== undefined) : db.subscriptions.toArray()));
      const out: Subscription[] = [];
      for (const row of rows) {
        if (!visible(row)) continue;
        if (!filter.includeDeleted && row.deleted !== undefined) continue;
        if (filter.subscribed !== undefined && row.isSubscribed !== filter.subscribed) continue;
        out.push(toSubscription(row));
      }
      return out;
    },

    /**
     * Feed URLs subscribed here and, as the server last said, there too under that URL: a feed whose add or
     * move has not reached it yet is not one (an episode action naming it would name a feed the account lacks).
     */
    async keptFeeds(): Promise<Set<string>> {
      const rows = await read(() => db.subscriptions.toArray());
      const kept = rows.filter(({ feedUrl, isSubscribed, deleted, base }) => isSubscribed && deleted === undefined && base?.isSubscribed && base.deleted === undefined && base.feedUrl === feedUrl);
      return new Set(kept.map((row) => row.feedUrl));
    },

    /** One entry, following aliases. */
    async get(guid: string): Promise<Subscription | undefined> {
      const row = await read(async () => db.subscriptions.get(await resolveKey(guid)));
      return row && visible(row) ? toSubscription(row) : undefined;
    },

    /** Queued changes (not failed), oldest first. */
    pendingChanges,

    /** Public shapes of the queue. */
    async pending(): Promise<PendingChange[]> {
      return labelled(() => db.outbox.where('state').anyOf('queued', 'deleting').sortBy('id'), toPending);
    },

    /** Changes the server refused. */
    async failed(): Promise<FailedChange[]> {
      return labelled(
        () => db.outbox.where('state').equals('failed').sortBy('id'),
        (c) => ({ ...toPending(c), reason: c.lastError ?? { code: 'invalid', message: 'refused' } }),
      );
    },

    /** Run several of the store's reads in one transaction (a status snapshot: one instead of one per read). */
    together,

    /** Counts for status. */
    async counts(): Promise<{ pending: number; failed: number }> {
      // One transaction: each one queues behind the writes under way.
      const [pending, failed] = await read(() =>
        Promise.all([db.outbox.where('state').anyOf('queued', 'deleting').count(), db.outbox.where('state').equals('failed').count()]),
      );
      return { pending, failed };
    },

    /**
     * The changes as the transport sends them: each with the guid to address on the server (it follows chains
     * from older guids) and the server's subscribed flag there; an add goes by its own. Asked in the transaction
     * that read the changes (the push's handout, the copy's build), so each names its row as stored.
     */
    async sendItems(changes: readonly StoredChange[]): Promise<SendItem[]> {
      // All at once: requests in one transaction pipeline; one by one, a long queue cost a round trip per change.
      return read(() =>
        Promise.all(
          changes.map(async (change): Promise<SendItem> => {
            const server = change.kind === 'add' ? undefined : await addressIn(change);
            return server ? { change, target: server.guid, isSubscribed: server.isSubscribed } : { change, target: change.kind === 'add' ? change.serverGuid : undefined };
          }),
        ),
      );
    },

    /** Every guid the store has (for the `change` event after `clear()`). */
    async allKeys(): Promise<string[]> {
      return (await read(() => db.subscriptions.toCollection().primaryKeys())) as string[];
    },
  };
}

/** The store's reads (`createReads`). */
export type Reads = ReturnType<typeof createReads>;
