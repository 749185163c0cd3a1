// Issue 16, item 3: clear() in another tab while this one syncs. Every write of the run (a pull's batch, an
// acknowledgement, the gPodder upload marks, the time of the last success) checks in its own transaction that
// the store is still the one the run began with, and writes nothing when it is not: the run ends as a typed
// error (`closed` for a wiped store, `account-mismatch` when another account holds it now), never with the
// signed-out account's data in the store. (This engine's next run may bind the empty store again: a sync binds.)
import { afterEach, describe, expect, it } from 'vitest';
import { openSyncDatabase } from '../../src/schema.ts';
import { isSyncError } from '../../src/errors.ts';
import { startGpodderServer } from '../server/gpodder/server.ts';
import type { GpodderServer } from '../server/gpodder/types.ts';
import { wallTime } from '../server/listen.ts';
import { createSyncEngine, type SyncEngine } from '../../worker/index.ts';
import { engine, server, spyFetch, uniqueDb } from './helpers.ts';

/** Everything in a database's tables (read through a connection of its own). */
async function contents(dbName: string) {
  const db = openSyncDatabase(dbName);
  try {
    return await db.transaction('r', [db.subscriptions, db.aliases, db.outbox, db.meta], async () => ({
      rows: await db.subscriptions.toArray(),
      aliases: await db.aliases.toArray(),
      outbox: await db.outbox.toArray(),
      meta: Object.fromEntries((await db.meta.toArray()).map((m) => [m.key, m.value])),
    }));
  } finally {
    db.close();
  }
}

const code = (error: unknown) => (isSyncError(error) ? error.code : `raw ${String(error)}`);
const list = (url: URL) => url.pathname.endsWith('/subscriptions') && !url.pathname.includes('/deletions');

describe('clear() in another tab during a pull', () => {
  it('the later pages are not written into the wiped store; the run ends as closed', async () => {
    const s = await server();
    let pages = 0;
    let wipe = async () => undefined as unknown;
    const e = engine(s, {
      pageSize: 3,
      fetch: spyFetch(async (url, init, real) => {
        if (list(url) && init?.method !== 'POST' && ++pages === 2) await wipe();
        return real(url, init);
      }),
    });
    // This tab leads (its first sync ran); the other one only clears.
    await e.sync();
    s.seed(20);
    pages = 0;
    const other = engine(s, { dbName: e.dbName, fetch: (() => Promise.reject(new TypeError('offline tab'))) as typeof fetch });
    wipe = () => other.clear();
    const outcome = await e.sync().then(() => 'done', code);
    expect(pages).toBeGreaterThan(3);
    const after = await contents(e.dbName);
    expect(after.rows).toEqual([]);
    expect(after.aliases).toEqual([]);
    // What is left is the wipe's epoch (and the binding, when this engine's next run claimed the empty store again).
    expect(Object.keys(after.meta).filter((k) => k !== 'binding')).toEqual(['epoch', 'signedOut']);
    expect(outcome).toBe('closed');
    // The engine is not broken: the next sync binds the store again and fills it.
    await e.sync();
    expect(await e.subscriptions()).toHaveLength(20);
  });

  it('the store cleared and bound to another server: nothing of this one lands in it (account-mismatch)', async () => {
    const one = await server();
    const two = await server({ seed: 2 });
    let pages = 0;
    let wipe = async () => undefined as unknown;
    const e = engine(one, {
      pageSize: 3,
      fetch: spyFetch(async (url, init, real) => {
        if (list(url) && init?.method !== 'POST' && ++pages === 2) await wipe();
        return real(url, init);
      }),
    });
    await e.sync();
    one.seed(20);
    pages = 0;
    const other = engine(two, { dbName: e.dbName });
    wipe = async () => {
      await other.clear();
      // A write binds: the store is the second server's now.
      await other.add('https://feeds.example/second-account.xml');
    };
    const outcome = await e.sync().then(() => 'done', code);
    const after = await contents(e.dbName);
    expect(after.rows.map((r) => r.feedUrl)).toEqual(['https://feeds.example/second-account.xml']);
    expect(after.meta.binding).toMatchObject({ server: two.url });
    expect(after.meta.cursor).toBeUndefined();
    expect(outcome).toBe('account-mismatch');
    await expect(e.subscriptions()).rejects.toMatchObject({ code: 'account-mismatch' });
  });
});

describe('clear() in another tab during a push', () => {
  it('an acknowledgement after the wipe writes nothing (no last success, no rows)', async () => {
    const s = await server({ seed: 3 });
    let wipe = async () => undefined as unknown;
    const e = engine(s, {
      fetch: spyFetch(async (url, init, real) => {
        if (init?.method === 'PATCH') await wipe();
        return real(url, init);
      }),
    });
    await e.sync();
    const other = engine(s, { dbName: e.dbName, fetch: (() => Promise.reject(new TypeError('offline tab'))) as typeof fetch });
    e.setOnline(false);
    const guid = s.state()[0]!.guid;
    await e.update(guid, { isSubscribed: false });
    wipe = () => other.clear();
    e.setOnline(true);
    const outcome = await e.sync().then(() => 'done', code);
    // The server got the change: it was sent before the wipe. The wiped store stays wiped.
    expect(s.entry(guid)?.is_subscribed).toBe(false);
    const after = await contents(e.dbName);
    expect(after.rows).toEqual([]);
    expect(after.outbox).toEqual([]);
    expect(Object.keys(after.meta).filter((k) => k !== 'binding')).toEqual(['epoch', 'signedOut']);
    expect(outcome).toBe('closed');
  });

  describe('gPodder', () => {
    const open: { close(): Promise<void> }[] = [];
    afterEach(async () => {
      while (open.length) await open.pop()!.close().catch(() => undefined);
    });
    function gEngine(s: GpodderServer, dbName: string, fetch?: typeof globalThis.fetch): SyncEngine {
      const e = createSyncEngine({
        protocol: 'gpodder',
        baseUrl: s.url,
        auth: { type: 'basic', username: 'alice', password: 'alice-password' },
        device: 'web-player',
        dbName,
        pullInterval: 0,
        pushDelay: 0,
        timeout: 2000,
        retry: { baseDelay: 10, maxDelay: 100 },
        ...(fetch ? { fetch } : {}),
      });
      open.push(e);
      return e;
    }

    it('the upload marks are not kept in a store wiped during the upload', async () => {
      let now = 1_700_000_000_000;
      const s = await startGpodderServer({ port: 0, dialect: 'opodsync', time: { ...wallTime, now: () => (now += 1000) } });
      open.push(s);
      s.foreign.add(['https://feeds.example/a.xml']);
      const dbName = uniqueDb('gpodder-wiped');
      let wipe = async () => undefined as unknown;
      const e = gEngine(
        s,
        dbName,
        spyFetch(async (url, init, real) => {
          if (init?.method === 'POST' && /subscriptions/.test(url.pathname)) await wipe();
          return real(url, init);
        }),
      );
      await e.sync();
      const other = gEngine(s, dbName, (() => Promise.reject(new TypeError('offline tab'))) as typeof fetch);
      // Node has no Web Locks, so both engines lead: the other one only clears, as a follower tab would (handing
      // the add out itself, it would make it wait for a pull after its own attempt, see `mayGo`).
      other.setOnline(false);
      e.setOnline(false);
      await e.add('https://feeds.example/b.xml');
      wipe = () => other.clear();
      e.setOnline(true);
      const outcome = await e.sync().then(() => 'done', code);
      expect(s.subscribed({ device: 'web-player' }).sort()).toEqual(['https://feeds.example/a.xml', 'https://feeds.example/b.xml']);
      const after = await contents(dbName);
      expect(after.rows).toEqual([]);
      expect(Object.keys(after.meta).filter((k) => k !== 'binding')).toEqual(['epoch', 'signedOut']);
      expect(outcome).toBe('closed');
    });
  });
});
