// What an edit and a status snapshot cost in IndexedDB: requests in one transaction pipeline, so what counts is
// how many times the engine waits for an answer before asking again (round trips), and how many transactions
// it creates. The store guard's read goes with the edit's own reads; a status snapshot is one transaction, and so
// is the last-chance copy an edit waits for, whose reads do not grow with the queue beyond what it can hold.
import { afterEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/types.ts';
import { systemClock } from '../../worker/clock.ts';
import { LAST_CHANCE_REQUESTS } from '../../worker/engine/last-chance.ts';
import { engine, server, until } from './helpers.ts';

type Methods = Record<string, (...args: unknown[]) => unknown>;

/**
 * Per read-write transaction of `dbName`: how many times a request was issued after an answer had come (its
 * round trips: the first request starts the first). Install before the engine opens its database.
 */
function countRoundTrips(dbName: string) {
  const rounds = new Map<IDBTransaction, number>();
  const answered = new Set<IDBTransaction>();
  const undo: (() => void)[] = [];
  const wrap = (proto: Methods, names: string[], txOf: (self: never) => IDBTransaction) => {
    for (const name of names) {
      const original = proto[name]!;
      proto[name] = function (this: never, ...args: unknown[]) {
        const request = original.apply(this, args) as IDBRequest;
        const tx = txOf(this);
        if (tx.db.name === dbName && tx.mode === 'readwrite') {
          if (!rounds.has(tx) || answered.has(tx)) rounds.set(tx, (rounds.get(tx) ?? 0) + 1);
          answered.delete(tx);
          request.addEventListener('success', () => answered.add(tx));
        }
        return request;
      };
      undo.push(() => (proto[name] = original));
    }
  };
  const reads = ['get', 'getAll', 'getAllKeys', 'count', 'openCursor', 'openKeyCursor'];
  wrap(IDBObjectStore.prototype as unknown as Methods, [...reads, 'put', 'add', 'delete', 'clear'], (s: IDBObjectStore) => s.transaction);
  wrap(IDBIndex.prototype as unknown as Methods, reads, (i: IDBIndex) => i.objectStore.transaction);
  return {
    /** Round trips of each read-write transaction since the last `reset`. */
    rounds: () => [...rounds.values()],
    reset: () => rounds.clear(),
    restore: () => undo.forEach((u) => u()),
  };
}

/** Calls of `proto[name]` that `counts` (given the receiver) while installed. */
function countCalls<P extends object, K extends keyof P>(proto: P, name: K, counts: (self: P) => boolean) {
  const original = proto[name] as (...args: unknown[]) => unknown;
  let calls = 0;
  proto[name] = function (this: P, ...args: unknown[]) {
    if (counts(this)) calls++;
    return original.apply(this, args);
  } as P[K];
  return {
    count: () => calls,
    reset: () => void (calls = 0),
    restore: () => void (proto[name] = original as P[K]),
  };
}

/** Transactions `dbName` creates while installed. */
const countTransactions = (dbName: string) => countCalls(IDBDatabase.prototype, 'transaction', (db) => db.name === dbName);

/** `get`s on `store` inside read-write transactions of `dbName` while installed (Dexie's `get` and `bulkGet` are these). */
const countGets = (dbName: string, store: string) =>
  countCalls(IDBObjectStore.prototype, 'get', (s) => s.name === store && s.transaction.db.name === dbName && s.transaction.mode === 'readwrite');

let restore: (() => void)[] = [];
afterEach(() => {
  for (const r of restore) r();
  restore = [];
});

describe('IndexedDB round trips', () => {
  it("update(): the guard's read goes with the edit's reads, so the edit waits twice (reads, then writes), not three times", async () => {
    const s = await server({ seed: 3 });
    const dbName = `round-trips-${Date.now()}`;
    const trips = countRoundTrips(dbName);
    restore.push(trips.restore);
    const e = engine(s, { dbName });
    await e.sync();
    // No push of the edits: only their own transactions are counted.
    e.setOnline(false);
    const guid = s.state()[0]!.guid;
    trips.reset();
    await e.update(guid, { feedUrl: 'https://trips.example/one.xml' });
    expect(trips.rounds()).toEqual([2]);
    // Coalescing into the queued change: the same.
    trips.reset();
    await e.update(guid, { feedUrl: 'https://trips.example/two.xml' });
    expect(trips.rounds()).toEqual([2]);
    await e.close();
  });

  it('status(): one transaction for the counts, the cursor, the last success and the pending episodes', async () => {
    const s = await server({ seed: 3 });
    const dbName = `status-tx-${Date.now()}`;
    const txs = countTransactions(dbName);
    restore.push(txs.restore);
    // The engine's timers wait while the call is counted (the status event an edit queues among them).
    let held = false;
    const clock: Clock = { ...systemClock, setTimeout: (callback, ms) => systemClock.setTimeout(() => (held ? undefined : callback()), ms) };
    const e = engine(s, { dbName, clock });
    await e.sync();
    e.setOnline(false);
    await e.update(s.state()[0]!.guid, { isSubscribed: false });
    held = true;
    await until(async () => (await e.status()).pending === 1);
    txs.reset();
    const status = await e.status();
    expect(txs.count()).toBe(1);
    expect(status).toMatchObject({ pending: 1, failed: 0, pendingEpisodes: 0 });
    expect(status.cursor).toBeDefined();
    await e.close();
  });
  it('update(): one transaction, the last-chance copy built inside it, however many changes wait', async () => {
    const s = await server({ seed: 5 });
    const dbName = `last-chance-tx-${Date.now()}`;
    const txs = countTransactions(dbName);
    restore.push(txs.restore);
    let held = false;
    const clock: Clock = { ...systemClock, setTimeout: (callback, ms) => systemClock.setTimeout(() => (held ? undefined : callback()), ms) };
    const e = engine(s, { dbName, clock });
    const copies: number[] = [];
    e.onLastChance((copy) => void copies.push(copy.length));
    await e.sync();
    e.setOnline(false);
    const [a, b, c, d] = s.state().map((row) => row.guid);
    for (const guid of [a, b, c]) await e.update(guid!, { feedUrl: `https://copy.example/${guid}.xml` });
    held = true;
    await until(async () => copies[copies.length - 1] === 3);
    txs.reset();
    await e.update(d!, { feedUrl: 'https://copy.example/d.xml' });
    // The edit's own, which reads the copy too (the queue and each waiting change's server address): no other.
    expect(txs.count()).toBe(1);
    expect(copies[copies.length - 1]).toBe(4);
    await e.close();
  });

  it("update(): with a long queue the copy addresses only the changes it can hold, not every queued one", async () => {
    const s = await server({ seed: 30 });
    const dbName = `last-chance-long-${Date.now()}`;
    const gets = countGets(dbName, 'subscriptions');
    restore.push(gets.restore);
    const e = engine(s, { dbName });
    const copies: number[] = [];
    e.onLastChance((copy) => void copies.push(copy.length));
    await e.sync();
    e.setOnline(false);
    const rows = s.state();
    // 29 PATCHes queued (harmless: every one may go in the copy, which holds LAST_CHANCE_REQUESTS of them).
    for (const row of rows.slice(0, 29)) await e.update(row.guid, { isSubscribed: !row.is_subscribed });
    gets.reset();
    await e.update(rows[29]!.guid, { isSubscribed: !rows[29]!.is_subscribed });
    expect(copies[copies.length - 1]).toBe(LAST_CHANCE_REQUESTS);
    // The edit's own read of its row, and the copy's: each addressed change's row (8), not the 30 queued. Before,
    // every queued change was addressed in every edit's transaction (31 reads here).
    expect(gets.count()).toBeLessThanOrEqual(LAST_CHANCE_REQUESTS + 2);
    expect((await e.pending()).length).toBe(30);
    await e.close();
  });
});
