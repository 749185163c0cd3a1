// The app's local edits: each one and its queue entry are written in one transaction, and the view the app
// gets back is the row as that transaction leaves it.
import { SyncError } from '../../src/errors.ts';
import type { ServerBase, StoredChange } from '../../src/schema.ts';
import type { Subscription, SubscriptionChange } from '../../src/types.ts';
import { noteWord, patchChange } from './acks.ts';
import { META, type StoreCore } from './core.ts';
import { changesNothing, fold, keyFor, toSubscription } from './view.ts';
import { harmless, mayHaveLeft } from './delivery.ts';
import type { Workset } from './workset.ts';

/** A fresh queue entry; on a row the server knows (`base`), it names the server's guid. */
export function queued(fields: Pick<StoredChange, 'guid' | 'kind'> & Partial<StoredChange>, now: number, base?: ServerBase): StoredChange {
  return { state: 'queued', version: 1, attempts: 0, notBefore: 0, createdAt: now, actionId: crypto.randomUUID(), ...(base && { serverGuid: base.guid }), ...fields };
}

/** Write a queued change edited in place (a new version); returns its row's key. */
function rewrite(ws: Workset, change: StoredChange): string {
  change.version++;
  return ws.putChange(change);
}

/** A row's state before its queued changes after `earlier` (its guid unknown without a server base). */
function before(base: ServerBase | undefined, earlier: readonly StoredChange[]) {
  return { ...fold(base, earlier), guid: base ? keyFor(base, earlier, base.guid) : undefined };
}

/**
 * Fold the flag changes queued behind a queued update into it, once neither is in flight: they queued apart only
 * because it was on its way when they were made. Without this, every edit made while a push carries them
 * would add one more entry, and the queue would grow with the edits while the server is unreachable.
 */
function foldFollowers(ws: Workset, key: string, inFlight: ReadonlySet<number>): StoredChange[] {
  const free = (c: StoredChange | undefined): c is StoredChange => c !== undefined && c.state === 'queued' && !c.held && !inFlight.has(c.id ?? -1);
  for (;;) {
    const changes = ws.changes(key);
    const last = changes[changes.length - 1];
    const prev = changes[changes.length - 2];
    const flagOnly = last?.kind === 'update' && last.change?.feedUrl === undefined && last.change?.guid === undefined;
    if (!flagOnly || !free(last) || !free(prev) || prev.kind !== 'update') return changes;
    prev.change = { ...prev.change, ...last.change };
    rewrite(ws, prev);
    ws.deleteChange(last);
  }
}

/** The public view of a row as this unit of work leaves it (saves a second read after the edit). */
function viewIn(ws: Workset, key: string): Subscription {
  const row = ws.row(key);
  if (!row) throw new SyncError('not-found', `no subscription ${key}`);
  return toSubscription(row);
}

/** The store's local edits; `newGuid` names a local add before the server has named it. */
export function createEdits(core: StoreCore, newGuid: () => string) {
  const { db, edit } = core;
  /**
   * Queue an add in `ws` at `candidate` (the app's guid, the row of the same feed, or a fresh local one): into a
   * queued add not sent yet, else a new entry (re-subscribing that row).
   */
  async function addIn(ws: Workset, feedUrl: string, guid: string | undefined, candidate: string, now: number, inFlight: ReadonlySet<number>, known: (number | undefined)[] = []) {
    await ws.preload([candidate]);
    const key = ws.resolve(candidate);
    const row = ws.row(key);
    const changes = ws.changes(key);
    const last = changes[changes.length - 1];
    // Not into an add held behind a deletion: this add comes after it, and must survive it.
    if (row && !row.base && last?.kind === 'add' && last.state === 'queued' && !mayHaveLeft(last) && !last.held && !inFlight.has(last.id ?? -1)) {
      last.feedUrl = feedUrl;
      return rewrite(ws, last);
    }
    if (!row) ws.createRow(key);
    const add = queued({ guid: key, kind: 'add', feedUrl, ...(guid !== undefined && { addGuid: guid }) }, now, row?.base);
    // Held in a page's copy from now on, which may deliver it: the word it leaves over, as `handOut` notes it.
    if (core.copying(add)) noteWord(add, row?.base ? [row.base] : [], known[0], known[1]);
    return ws.putChange(add);
  }
  /** The cursor and the pulls completed, read where adds may be copied (see `addIn`). */
  /** Whether a page holds a copy that may carry an add. */
  const copyingAdds = () => core.copying({ kind: 'add' } as StoredChange);
  const wordFor = async () => (copyingAdds() ? (await db.meta.bulkGet([META.cursor, META.pulls])).map((r) => r?.value as number | undefined) : []);
  return {
    /** Queue an add; re-subscribes an existing row with that guid or feed URL. */
    async add(feedUrl: string, guid: string | undefined, now: number, inFlight: ReadonlySet<number>) {
      return edit(async (ws) => {
        const sameFeed = guid === undefined ? (await db.subscriptions.toArray()).find((r) => r.feedUrl === feedUrl)?.guid : undefined;
        return viewIn(ws, await addIn(ws, feedUrl, guid, guid ?? sameFeed ?? newGuid(), now, inFlight, await wordFor()));
      }, undefined, copyingAdds());
    },

    /**
     * Queue an add for each feed URL (distinct, checked) not subscribed already, in one unit of work: the same
     * rows and queue entries `add` writes. `guidFor` names them where the protocol keys a subscription by URL.
     */
    async addMany(feedUrls: readonly string[], guidFor: ((url: string) => string) | undefined, now: number, inFlight: ReadonlySet<number>) {
      return edit(async (ws) => {
        const byFeed = new Map((await db.subscriptions.toArray()).map((r) => [r.feedUrl, r.guid]));
        const report = { added: [] as string[], alreadyThere: [] as string[] };
        // Every key the adds land on, fresh local ones too, read in one go: one by one, a thousand feeds cost
        // three thousand reads in a row inside the transaction.
        const keys = feedUrls.map((url) => guidFor?.(url) ?? byFeed.get(url) ?? newGuid());
        await ws.preload(keys);
        const known = await wordFor();
        for (const [i, url] of feedUrls.entries()) {
          const guid = guidFor?.(url);
          const row = ws.row(ws.resolve(keys[i]!));
          const there = row && row.isSubscribed && row.deleted === undefined;
          if (!there) await addIn(ws, url, guid, keys[i]!, now, inFlight, known);
          report[there ? 'alreadyThere' : 'added'].push(url);
        }
        return report;
      }, undefined, copyingAdds());
    },
    /** Queue a change to an existing subscription, coalescing with a queued one not in flight. */
    async update(guid: string, change: SubscriptionChange, now: number, inFlight: ReadonlySet<number>) {
      return edit(async (ws) => viewIn(ws, await updateIn(ws)));
      async function updateIn(ws: Workset): Promise<string> {
        await ws.preload(change.guid === undefined ? [guid] : [guid, change.guid]);
        const key = ws.resolve(guid);
        const row = ws.row(key);
        if (!row || (!row.base && row.pending === 0)) throw new SyncError('not-found', `no subscription ${guid}`);
        if (row.deleted !== undefined) throw new SyncError('gone', `subscription ${guid} is deleted`);
        const wanted: SubscriptionChange = { ...change };
        if (wanted.guid === key) delete wanted.guid;
        // What the app sees already: nothing to queue, nothing to announce.
        if (changesNothing(wanted, { guid: key, feedUrl: row.feedUrl, isSubscribed: row.isSubscribed })) return key;
        const changes = foldFollowers(ws, key, inFlight);
        const last = changes[changes.length - 1];
        const editable = last && last.state === 'queued' && !inFlight.has(last.id ?? -1);
        // A move that may have reached the server is kept as sent; a further move queues behind it.
        if (editable && last.kind === 'update' && !(last.sent && last.change?.guid !== undefined && wanted.guid !== undefined)) {
          last.change = { ...last.change, ...wanted };
          // Folded back to the state before it (the server's, when it is the only one) and never handed out nor held
          // in a page's last copy (its stored delivery state says): it leaves the queue. One that may have reached the
          // server stays: the server may hold its earlier value.
          return !mayHaveLeft(last) && changesNothing(last.change, before(row.base, changes.slice(0, -1))) ? ws.deleteChange(last) : rewrite(ws, last);
        }
        if (editable && last.kind === 'add' && !mayHaveLeft(last) && !row.base && wanted.guid === undefined && wanted.isSubscribed !== false) {
          // Not sent yet: the POST can carry the new feed URL itself.
          if (wanted.feedUrl !== undefined) last.feedUrl = wanted.feedUrl;
          return rewrite(ws, last);
        }
        return ws.putChange(queued({ guid: key, kind: 'update', change: wanted }, now, row.base));
      }
    },

    /**
     * Queue a deletion. The subscription's queued edits that cannot have reached the server wait behind it
     * (re-queued after it, marked `held`): dropped once the deletion succeeds (see `ackDeleted`), sent if the
     * server refuses it or rolls it back. An add or a move that may have reached the server stays ahead of it.
     */
    async remove(guid: string, now: number, inFlight: ReadonlySet<number>) {
      return edit(async (ws) => {
        await ws.preload([guid]);
        const key = ws.resolve(guid);
        const row = ws.row(key);
        if (!row || (!row.base && row.pending === 0)) throw new SyncError('not-found', `no subscription ${guid}`);
        // Deleted already, unless a change still queued would bring it back (gPodder: a subscribe queued before a
        // full listing left the feed out): that one must not go on its own.
        if (row.deleted !== undefined && row.pending === 0) return key;
        const waiting = ws.changes(key).filter((c) => c.state === 'queued' && !inFlight.has(c.id ?? -1) && (!mayHaveLeft(c) || harmless(c)));
        if (!row.base && ws.changes(key).every((c) => c.state === 'failed' || waiting.includes(c)) && !ws.changes(key).some(mayHaveLeft)) {
          // An add that never left this device (nor a page's copy) needs no DELETE: dropping it (and its edits) is the deletion.
          for (const change of waiting) ws.deleteChange(change);
          return ws.resolve(key);
        }
        let at = ws.putChange(queued({ guid: key, kind: 'remove' }, now, row.base));
        for (const change of waiting) {
          // The copy goes in before the original goes out: a queued guid change keeps keying the row throughout.
          const { id: _id, ...rest } = change;
          ws.putChange({ ...rest, guid: at, held: true });
          at = ws.deleteChange(change);
        }
        return at;
      });
    },

    /** Re-queue a failed change. */
    async retry(id: number) {
      const stored = await core.read(() => db.outbox.get(id));
      if (!stored || stored.state !== 'failed') throw new SyncError('not-found', `no failed change ${id}`);
      return patchChange(core, stored, { state: 'queued', attempts: 0, notBefore: 0, deletionId: undefined });
    },

    /** Drop a failed change. */
    async discard(id: number) {
      return edit(async (ws) => {
        const current = await ws.loadChange(id);
        if (!current || current.state !== 'failed') throw new SyncError('not-found', `no failed change ${id}`);
        ws.deleteChange(current);
      });
    },
  };
}
