// Subscription rows on disk. Most rows are plain: no queued change, so the view is the server base and the
// full shape would hold every value twice. A plain row is stored flat with short names (a first pull writes
// about half the bytes); a Dexie middleware below every other layer restores the full shape on every read,
// so whoever opens the database with `openSyncDatabase` (the engine, a page's liveQuery) sees full rows.
import type { DBCore, DBCoreCursor, Middleware } from 'dexie';
import type { ServerBase, StoredSubscription } from './stored.ts';

/**
 * A plain row as stored: the base's fields, `da` only when `dataAt` differs from `at`, and `sc` only when
 * `subscriptionChanged` is not `at` written as an ISO string (the usual case, where it says nothing `at`
 * does not): `""` when the entry had none, the server's own string when it is written otherwise.
 */
interface PlainRow {
  guid: string;
  url: string;
  sub: boolean;
  at: number;
  da?: number;
  sc?: string;
  gc?: string;
  del?: string;
}

function isPlain(row: StoredSubscription): boolean {
  const base = row.base;
  return (
    row.pending === 0 &&
    !row.hasFailed &&
    base?.guid === row.guid &&
    base.feedUrl === row.feedUrl &&
    base.isSubscribed === row.isSubscribed &&
    base.deleted === row.deleted
  );
}

/** The stored form of a row (plain rows compacted, others as they are). */
export function encodeRow(row: StoredSubscription): StoredSubscription | PlainRow {
  if (!isPlain(row)) return row;
  const base = row.base!;
  const out: PlainRow = { guid: row.guid, url: base.feedUrl, sub: base.isSubscribed, at: base.at };
  if (base.dataAt !== base.at) out.da = base.dataAt;
  const sc = base.subscriptionChanged;
  // `toJSON` is `toISOString` giving null for a time no Date can hold (where that throws): never the string.
  if (out.da !== undefined || new Date(base.at).toJSON() !== sc) out.sc = sc ?? '';
  if (base.guidChanged !== undefined) out.gc = base.guidChanged;
  if (base.deleted !== undefined) out.del = base.deleted;
  return out;
}

/** The full row from its stored form. */
export function decodeRow(stored: StoredSubscription | PlainRow | undefined): StoredSubscription | undefined {
  if (!stored || !('url' in stored)) return stored;
  const { guid, url: feedUrl, sub: isSubscribed, at, del } = stored;
  const base: ServerBase = { guid, feedUrl, isSubscribed, at, dataAt: stored.da ?? at };
  // None stored: `at` as an ISO string; `""`: the entry had none.
  const sc = stored.sc ?? new Date(at).toJSON();
  if (sc) base.subscriptionChanged = sc;
  if (stored.gc !== undefined) base.guidChanged = stored.gc;
  const row: StoredSubscription = { guid, feedUrl, isSubscribed, pending: 0, base };
  if (del !== undefined) row.deleted = base.deleted = del;
  return row;
}

/** A cursor whose `value` is the decoded row (decoded once per position). */
function decodingCursor(cursor: DBCoreCursor): DBCoreCursor {
  let raw: unknown;
  let row: unknown;
  return Object.create(cursor, {
    value: {
      get() {
        if (cursor.value !== raw) {
          raw = cursor.value;
          row = decodeRow(raw as StoredSubscription);
        }
        return row;
      },
    },
  }) as DBCoreCursor;
}

/** The middleware: encodes `subscriptions` rows on the way in, decodes them on the way out. */
export const rowCodec: Middleware<DBCore> = {
  stack: 'dbcore',
  name: 'opa-sync:row-codec',
  // Below Dexie's own layers (observability, caches, hooks): they all see full rows.
  level: -2,
  create: (down) => ({
    ...down,
    table(name) {
      const table = down.table(name);
      if (name !== 'subscriptions') return table;
      // `.then` on what the layer below returns, not `await`: Dexie's transaction zones follow its own promises.
      return {
        ...table,
        mutate: (req) => table.mutate(req.type === 'add' || req.type === 'put' ? { ...req, values: req.values.map(encodeRow) } : req),
        get: (req) => table.get(req).then(decodeRow),
        getMany: (req) => table.getMany(req).then((rows) => rows.map(decodeRow)),
        query: (req) => table.query(req).then((res) => (req.values ? { ...res, result: res.result.map(decodeRow) } : res)),
        openCursor: (req) => table.openCursor(req).then((cursor) => (cursor && req.values ? decodingCursor(cursor) : cursor)),
      };
    },
  }),
};
