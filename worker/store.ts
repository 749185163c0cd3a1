// The local database: every read and every atomic edit the engine makes. Network I/O never happens here.
import { Dexie } from 'dexie';
import { SyncError } from '../src/errors.ts';
import type { ServerBase, StoredChange, StoredSubscription, SyncDatabase } from '../src/schema.ts';
import type {
  ErrorInfo,
  FailedChange,
  PendingChange,
  Subscription,
  SubscriptionChange,
  SubscriptionFilter,
} from '../src/types.ts';
import { formatTimestamp, parseTimestamp } from './time.ts';
import { mergeBase, toSubscription } from './view.ts';
import type { WireAddResult, WireSubscription, WireUpdateResult } from './wire.ts';
import { createWorkset, type Workset } from './workset.ts';

/** Meta keys. */
const CURSOR = 'cursor';
const BINDING = 'binding';
const LAST_SUCCESS = 'lastSuccess';
/** Changes whenever the store is wiped: a pull that began before must not store its cursor after. */
const EPOCH = 'epoch';

/** What a store is bound to: one server and, when given, one account. */
export interface Binding {
  server: string;
  account?: string;
}

/** A pull that began on an empty store: only what it wrote itself can exist (see `createWorkset`). */
export interface FreshPull {
  written: Set<string>;
}

/** The engine's view of the database. */
export type Store = ReturnType<typeof createStore>;

/** Turn Dexie/IndexedDB failures into `SyncError`s (quota first: it is the one a user can act on). */
export function storageError(error: unknown): unknown {
  if (error instanceof SyncError) return error;
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

/** The greatest server timestamp of an entry, in ms (0 when it has none). */
export function entryTime(entry: Pick<WireSubscription, 'subscription_changed' | 'guid_changed' | 'deleted'>): number {
  let at = 0;
  for (const value of [entry.subscription_changed, entry.guid_changed, entry.deleted]) {
    if (value !== undefined) at = Math.max(at, parseTimestamp(value) ?? 0);
  }
  return at;
}

function baseFromEntry(entry: WireSubscription): ServerBase {
  const base: ServerBase = {
    guid: entry.new_guid ?? entry.guid,
    feedUrl: entry.feed_url,
    isSubscribed: entry.is_subscribed,
    at: entryTime(entry),
    dataAt: entry.subscription_changed === undefined ? 0 : (parseTimestamp(entry.subscription_changed) ?? 0),
  };
  if (entry.subscription_changed !== undefined) base.subscriptionChanged = entry.subscription_changed;
  if (entry.guid_changed !== undefined) base.guidChanged = entry.guid_changed;
  if (entry.deleted !== undefined) base.deleted = entry.deleted;
  return base;
}

/** A fresh queue entry. */
function queued(fields: Pick<StoredChange, 'guid' | 'kind'> & Partial<StoredChange>, now: number): StoredChange {
  return { state: 'queued', version: 1, attempts: 0, notBefore: 0, createdAt: now, ...fields };
}

/** The public view of a row as this unit of work leaves it (saves a second read after the edit). */
function viewIn(ws: Workset, key: string): Subscription {
  const row = ws.row(key);
  if (!row) throw new SyncError('not-found', `no subscription ${key}`);
  return toSubscription(row);
}

function toPending(change: StoredChange): PendingChange {
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

/** Create the store over an (unopened) database. */
export function createStore(db: SyncDatabase) {
  const tables = [db.subscriptions, db.outbox, db.aliases, db.meta];

  /** Run `work` in one read-write transaction; returns its result and the guids whose view changed. */
  async function edit<T>(work: (ws: Workset) => Promise<T>, fresh?: FreshPull): Promise<{ result: T; changed: string[] }> {
    try {
      return await db.transaction('rw', tables, async () => {
        // Another tab may have queued a change since the pull began: then nothing can be assumed absent.
        const assume = fresh && (await db.outbox.count()) === 0 ? (key: string) => !fresh.written.has(key) : undefined;
        const ws = createWorkset(db, assume);
        const result = await work(ws);
        const changed = await ws.flush();
        if (fresh) for (const key of ws.written()) fresh.written.add(key);
        return { result, changed };
      });
    } catch (error) {
      throw storageError(error);
    }
  }

  async function readOnly<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await db.transaction('r', tables, work);
    } catch (error) {
      throw storageError(error);
    }
  }

  async function resolveKey(guid: string): Promise<string> {
    let current = guid;
    for (let hop = 0; hop < 64; hop++) {
      const alias = await db.aliases.get(current);
      if (!alias || alias.to === guid) return current;
      current = alias.to;
    }
    return current;
  }

  function visible(row: StoredSubscription): boolean {
    // A local add the server refused has no server state and nothing live: only failed() shows it.
    return row.base !== undefined || row.pending > 0;
  }

  return {
    db,

    /** Check (or record, on first use) which server and account this database belongs to. */
    async bind(binding: Binding): Promise<void> {
      await db.transaction('rw', db.meta, async () => {
        if (!(await db.meta.get(EPOCH))) await db.meta.put({ key: EPOCH, value: crypto.randomUUID() });
        const stored = (await db.meta.get(BINDING))?.value as Binding | undefined;
        if (!stored) {
          await db.meta.put({ key: BINDING, value: binding });
          return;
        }
        const accountClash = binding.account !== undefined && stored.account !== undefined && stored.account !== binding.account;
        if (stored.server !== binding.server || accountClash) {
          throw new SyncError(
            'account-mismatch',
            `database "${db.name}" holds data of ${stored.server}${stored.account ? ` (account ${stored.account})` : ''}; call clear() to reuse it`,
          );
        }
        if (binding.account !== undefined && stored.account === undefined) await db.meta.put({ key: BINDING, value: binding });
      });
    },

    /** The local view. */
    async list(filter: SubscriptionFilter = {}): Promise<Subscription[]> {
      const rows = await readOnly(() => db.subscriptions.toArray());
      const out: Subscription[] = [];
      for (const row of rows) {
        if (!visible(row)) continue;
        if (!filter.includeDeleted && row.deleted !== undefined) continue;
        if (filter.subscribed !== undefined && row.isSubscribed !== filter.subscribed) continue;
        out.push(toSubscription(row));
      }
      return out;
    },

    /** One entry, following aliases. */
    async get(guid: string): Promise<Subscription | undefined> {
      const row = await readOnly(async () => db.subscriptions.get(await resolveKey(guid)));
      return row && visible(row) ? toSubscription(row) : undefined;
    },


    /** Queue an add; re-subscribes an existing row with that guid or feed URL. */
    async add(feedUrl: string, guid: string | undefined, now: number, inFlight: ReadonlySet<number>) {
      return edit(async (ws) => viewIn(ws, await addIn(ws)));
      async function addIn(ws: Workset): Promise<string> {
        const sameFeed = guid === undefined ? await db.subscriptions.where('feedUrl').equals(feedUrl).first() : undefined;
        const candidate = guid ?? sameFeed?.guid ?? `local-${crypto.randomUUID()}`;
        await ws.preload([candidate]);
        const key = ws.resolve(candidate);
        const row = ws.row(key);
        const changes = ws.changes(key);
        const last = changes[changes.length - 1];
        if (row && !row.base && last?.kind === 'add' && last.state === 'queued' && !last.sent && !inFlight.has(last.id ?? -1)) {
          last.feedUrl = feedUrl;
          last.version++;
          return ws.putChange(last);
        }
        if (!row) ws.createRow(key);
        return ws.putChange(
          queued(
            {
              guid: key,
              kind: 'add',
              feedUrl,
              ...(guid !== undefined ? { addGuid: guid } : {}),
              ...(row?.base ? { serverGuid: row.base.guid } : {}),
            },
            now,
          ),
        );
      }
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
        const changes = ws.changes(key);
        const last = changes[changes.length - 1];
        const editable = last && last.state === 'queued' && !inFlight.has(last.id ?? -1);
        if (editable && last.kind === 'update') {
          last.change = { ...last.change, ...wanted };
          last.version++;
          return ws.putChange(last);
        }
        if (editable && last.kind === 'add' && !last.sent && !row.base && wanted.guid === undefined && wanted.isSubscribed !== false) {
          // Not sent yet: the POST can carry the new feed URL itself.
          if (wanted.feedUrl !== undefined) last.feedUrl = wanted.feedUrl;
          last.version++;
          return ws.putChange(last);
        }
        return ws.putChange(queued({ guid: key, kind: 'update', change: wanted, ...(row.base ? { serverGuid: row.base.guid } : {}) }, now));
      }
    },

    /** Queue a deletion; queued edits of the same subscription are dropped (they would be deleted anyway). */
    async remove(guid: string, now: number, inFlight: ReadonlySet<number>) {
      return edit(async (ws) => {
        await ws.preload([guid]);
        const key = ws.resolve(guid);
        const row = ws.row(key);
        if (!row || (!row.base && row.pending === 0)) throw new SyncError('not-found', `no subscription ${guid}`);
        if (row.deleted !== undefined) return key;
        for (const change of [...ws.changes(key)]) {
          // An add that may have reached the server stays: the DELETE goes after it.
          const keep = inFlight.has(change.id ?? -1) || (change.kind === 'add' && change.sent === true);
          if (change.state === 'queued' && !keep) ws.deleteChange(change);
        }
        // Dropping a queued guid change re-keys the row back: continue under the key it has now.
        const current = ws.resolve(key);
        // An add that never left this device needs no DELETE: dropping it (done above) was the deletion.
        if (!row.base && ws.changes(current).every((c) => c.state === 'failed')) return current;
        return ws.putChange(queued({ guid: current, kind: 'remove', ...(row.base ? { serverGuid: row.base.guid } : {}) }, now));
      });
    },

    /** Apply validated server entries in one transaction; `cursor` (ms) is stored with them when given. Returns the changed guids. */
    async applyEntries(
      entries: readonly WireSubscription[],
      cursor?: number,
      fresh?: FreshPull,
      snapshot?: ReadonlySet<string>,
      epoch?: string,
    ) {
      return edit(async (ws) => {
        const guids: string[] = [];
        for (const e of entries) {
          guids.push(e.guid);
          if (e.new_guid !== undefined) guids.push(e.new_guid);
        }
        await ws.preload(guids);
        for (const entry of entries) {
          const base = baseFromEntry(entry);
          const newest = base.guid;
          const k1 = ws.resolve(entry.guid);
          const r1 = ws.row(k1);
          const k2 = newest === entry.guid ? k1 : ws.resolve(newest);
          const r2 = k2 === k1 ? r1 : ws.row(k2);
          if (newest !== entry.guid) ws.alias(entry.guid, newest);
          if (r1 && r2 && k1 !== k2) {
            // Two local rows are one on the server now: re-key the old one onto the newest (merging them).
            ws.setBase(k1, { ...(r1.base ?? base), guid: k2 });
          }
          const key = r2 ? k2 : r1 ? k1 : newest;
          const merged = mergeBase(ws.row(key)?.base, base);
          if (!merged) continue;
          const finalKey = ws.setBase(key, merged);
          if (finalKey !== newest) ws.alias(newest, finalKey);
        }
        if (snapshot && cursor !== undefined) {
          // The listing was complete: what it left out was deleted on the server (with the cursor, atomically).
          const stale = (await db.subscriptions.toArray()).filter((r) => r.base && r.base.deleted === undefined && !snapshot.has(r.base.guid));
          await ws.preload(stale.map((r) => r.guid));
          for (const r of stale) {
            const row = ws.row(r.guid);
            if (row?.base && row.base.deleted === undefined && !snapshot.has(row.base.guid)) {
              ws.setBase(r.guid, { ...row.base, deleted: formatTimestamp(cursor) });
            }
          }
        }
        // Compare-and-set: if the store was wiped since the pull began, its earlier pages are gone too.
        if (cursor !== undefined && (epoch === undefined || (await db.meta.get(EPOCH))?.value === epoch)) {
          await db.meta.put({ key: CURSOR, value: cursor });
        }
      }, fresh);
    },

    /** Whether the store holds nothing at all (a first pull may then skip reading what cannot exist). */
    async isEmpty(): Promise<boolean> {
      return readOnly(async () => {
        const counts = await Promise.all([db.subscriptions.count(), db.aliases.count(), db.outbox.count()]);
        return counts.every((n) => n === 0);
      });
    },

    /** The store's current epoch (see `EPOCH`). */
    async epoch(): Promise<string | undefined> {
      const value = (await db.meta.get(EPOCH))?.value;
      return typeof value === 'string' ? value : undefined;
    },

    /** The stored cursor (ms), if a pull ever completed. */
    async cursor(): Promise<number | undefined> {
      const value = (await db.meta.get(CURSOR))?.value;
      return typeof value === 'number' ? value : undefined;
    },

    /** Device time of the last successful sync. */
    async lastSuccess(): Promise<number | undefined> {
      const value = (await db.meta.get(LAST_SUCCESS))?.value;
      return typeof value === 'number' ? value : undefined;
    },

    /** Record a successful sync (device time, for display only). */
    async setLastSuccess(at: number): Promise<void> {
      await db.meta.put({ key: LAST_SUCCESS, value: at });
    },

    /** Queued changes (not failed), oldest first. */
    async pendingChanges(): Promise<StoredChange[]> {
      const list = await db.outbox.where('state').anyOf('queued', 'deleting').toArray();
      return list.sort((a, b) => a.id! - b.id!);
    },

    /** Public shapes of the queue. */
    async pending(): Promise<PendingChange[]> {
      return (await this.pendingChanges()).map(toPending);
    },

    /** Changes the server refused. */
    async failed(): Promise<FailedChange[]> {
      const list = await db.outbox.where('state').equals('failed').sortBy('id');
      return list.map((c) => ({ ...toPending(c), reason: c.lastError ?? { code: 'invalid', message: 'refused' } }));
    },

    /** Counts for status. */
    async counts(): Promise<{ pending: number; failed: number }> {
      const [pending, failed] = await Promise.all([
        db.outbox.where('state').anyOf('queued', 'deleting').count(),
        db.outbox.where('state').equals('failed').count(),
      ]);
      return { pending, failed };
    },

    /** The server guid to address a change to (the server follows chains from older guids). */
    async address(change: StoredChange): Promise<string | undefined> {
      if (change.serverGuid !== undefined) return change.serverGuid;
      const row = await db.subscriptions.get(change.guid);
      return row?.base?.guid;
    },

    /** A POST was answered: the server's entry becomes the base; the change goes if it was not edited meanwhile. */
    async ackAdd(sent: StoredChange, item: WireAddResult['success'][number]) {
      return edit(async (ws) => {
        const current = await ws.loadChange(sent.id!);
        if (!current) return;
        await ws.preload([item.guid]);
        const row = ws.row(current.guid);
        const at = item.subscription_changed ? (parseTimestamp(item.subscription_changed) ?? 0) : 0;
        const base: ServerBase = {
          ...(row?.base ?? {}),
          guid: item.guid,
          feedUrl: item.feed_url,
          isSubscribed: item.is_subscribed,
          at: Math.max(at, row?.base?.at ?? 0),
          dataAt: Math.max(at, row?.base?.dataAt ?? 0),
        };
        delete base.deleted;
        if (item.subscription_changed !== undefined) base.subscriptionChanged = item.subscription_changed;
        // Base first (this may re-key the row and its changes onto the server's guid), then drop what was sent.
        ws.setBase(current.guid, base);
        if (current.version === sent.version) ws.deleteChange(current);
      });
    },

    /** A PATCH was answered: what was sent is now the server's state (last write wins there). */
    async ackUpdate(sent: StoredChange, result: WireUpdateResult | undefined) {
      return edit(async (ws) => {
        const current = await ws.loadChange(sent.id!);
        if (!current) return;
        const newGuid = result?.new_guid ?? sent.change?.guid;
        if (newGuid !== undefined) await ws.preload([newGuid]);
        const row = ws.row(current.guid);
        if (!row?.base) {
          if (current.version === sent.version) ws.deleteChange(current);
          return;
        }
        const change = sent.change ?? {};
        const base: ServerBase = { ...row.base };
        base.feedUrl = result?.new_feed_url ?? change.feedUrl ?? base.feedUrl;
        base.isSubscribed = result?.is_subscribed ?? change.isSubscribed ?? base.isSubscribed;
        if (newGuid !== undefined && newGuid !== base.guid) {
          ws.alias(base.guid, newGuid);
          base.guid = newGuid;
        }
        if (result?.subscription_changed !== undefined) {
          base.subscriptionChanged = result.subscription_changed;
          base.dataAt = Math.max(base.dataAt, parseTimestamp(result.subscription_changed) ?? 0);
        }
        if (result?.guid_changed !== undefined) base.guidChanged = result.guid_changed;
        base.at = Math.max(base.at, entryTime(result ?? {}));
        ws.setBase(current.guid, base);
        if (current.version === sent.version) ws.deleteChange(current);
      });
    },

    /** A DELETE was accepted: keep the deletion id and poll it. */
    async deletionAccepted(sent: StoredChange, deletionId: number, notBefore: number) {
      return this.patchChange(sent, { state: 'deleting', deletionId, attempts: 0, notBefore, lastError: undefined });
    },

    /** The deletion is done (or the server had nothing to delete): the row becomes a tombstone. */
    async ackDeleted(sent: StoredChange, now: number) {
      return edit(async (ws) => {
        const current = await ws.loadChange(sent.id!);
        if (!current) return;
        const row = ws.row(current.guid);
        // No server timestamp is known yet: keep `at` so the next pull's entry (with the server's time) wins.
        if (row?.base) ws.setBase(current.guid, { ...row.base, deleted: row.base.deleted ?? formatTimestamp(now) });
        ws.deleteChange(current);
      });
    },

    /** Move a change to `failed()` (the view falls back to the server's state). */
    async fail(sent: StoredChange, reason: ErrorInfo) {
      return this.patchChange(sent, { state: 'failed', lastError: reason });
    },

    /** Keep a change queued and try again later. */
    async later(sent: StoredChange, notBefore: number, lastError: ErrorInfo | undefined, serverHold?: number) {
      return this.patchChange(sent, { attempts: sent.attempts + 1, notBefore, serverHold, ...(lastError ? { lastError } : {}) });
    },

    /** Edit fields of a stored change (found by id; `undefined` removes a field) and re-derive its row. */
    async patchChange(sent: StoredChange, fields: Partial<StoredChange>) {
      return edit(async (ws) => {
        const current = await ws.loadChange(sent.id!);
        if (!current) return;
        for (const [key, value] of Object.entries(fields)) {
          if (value === undefined) delete (current as unknown as Record<string, unknown>)[key];
          else (current as unknown as Record<string, unknown>)[key] = value;
        }
        ws.putChange(current);
      });
    },

    /** Record that these adds are about to be sent (before the request: a crash after it must still know). */
    async markSent(ids: number[]): Promise<Map<number, StoredChange>> {
      if (!ids.length) return new Map();
      try {
        return await db.transaction('rw', db.outbox, async () => {
          // Only what still exists, as it is now: since the queue was read, a remove() may have dropped an
          // unsent add, or an edit folded into it. What is marked here is exactly what gets sent.
          const found = (await db.outbox.bulkGet(ids)).filter((c): c is StoredChange => c !== undefined);
          const marked = found.map((c) => ({ ...c, sent: true }));
          await db.outbox.bulkPut(marked);
          return new Map(marked.map((c) => [c.id!, c]));
        });
      } catch (error) {
        throw storageError(error);
      }
    },

    /** Re-queue a failed change. */
    async retry(id: number) {
      const stored = await db.outbox.get(id);
      if (!stored || stored.state !== 'failed') throw new SyncError('not-found', `no failed change ${id}`);
      return this.patchChange(stored, { state: 'queued', attempts: 0, notBefore: 0, deletionId: undefined });
    },

    /** Drop a failed change. */
    async discard(id: number) {
      return edit(async (ws) => {
        const current = await ws.loadChange(id);
        if (!current || current.state !== 'failed') throw new SyncError('not-found', `no failed change ${id}`);
        ws.deleteChange(current);
      });
    },

    /** Every guid the store has (for the `change` event after `clear()`). */
    async allKeys(): Promise<string[]> {
      return (await db.subscriptions.toCollection().primaryKeys()) as string[];
    },

    /** Wipe everything, then bind again. */
    async clear(binding: Binding): Promise<void> {
      await db.transaction('rw', tables, async () => {
        await Promise.all(tables.map((t) => t.clear()));
        await db.meta.put({ key: BINDING, value: binding });
        await db.meta.put({ key: EPOCH, value: crypto.randomUUID() });
      });
    },
  };
}

/** Whether an error means the database went away under us (deleted or closed by another context). */
export function isClosedError(error: unknown): boolean {
  return error instanceof Dexie.DatabaseClosedError;
}
