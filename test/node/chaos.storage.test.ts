// Storage trouble: the browser refuses writes (quota) in the middle of a pull, of a local edit, of an
// acknowledgement; the database is deleted, or wiped by another tab, under an open engine. Quota surfaces as a
// SyncError with code `quota` and loses nothing already acknowledged; a deleted or wiped store is recovered from.
import { Dexie } from 'dexie';
import { afterEach, describe, expect, it } from 'vitest';
import { isSyncError } from '../../src/errors.ts';
import { readStore } from '../chaos/fixtures.ts';
import { checkInvariants, cursorViolations } from '../chaos/invariants.ts';
import { Model } from '../chaos/model.ts';
import { failWrites } from '../chaos/storage.ts';
import { engine, picture, requests, server, serverPicture, settle, spyFetch } from './helpers.ts';

let restore: (() => void) | undefined;
afterEach(() => {
  restore?.();
  restore = undefined;
});

describe('chaos: storage quota', () => {
  it('quota mid-pull: sync() rejects with code quota, queued changes and the cursor are kept, and the next pull completes', async () => {
    const s = await server({ seed: 24 });
    const e = engine(s, { pageSize: 4 });
    const model = new Model();
    for (const view of s.state()) model.fromServer(view);
    await e.sync();
    const cursor = (await e.status()).cursor;
    e.setOnline(false);
    const mine = s.state()[0]!.guid;
    await e.update(mine, { feedUrl: 'https://quota.example/mine.xml' });
    model.localUpdate(model.byHandle(mine)!, { feedUrl: 'https://quota.example/mine.xml' });
    for (const view of s.state().slice(1, 16)) {
      s.foreign.patch(view.guid, { is_subscribed: !view.is_subscribed });
      model.foreignPatch(model.byHandle(view.guid)!, { is_subscribed: !view.is_subscribed });
    }
    // Two pages fit; the third does not.
    const fault = failWrites(e.dbName, { store: 'subscriptions', after: 8 });
    restore = fault.restore;
    e.setOnline(true);
    const error = await e.sync().then(() => undefined, (err: unknown) => err);
    expect(isSyncError(error) && error.code).toBe('quota');
    expect(fault.refused).toBeGreaterThan(0);
    expect((await e.status()).lastError?.code).toBe('quota');
    expect((await e.status()).cursor).toBe(cursor);
    expect(await cursorViolations(e.dbName, s)).toEqual([]);
    const queued = await e.pending();
    expect(queued).toHaveLength(1);
    expect(queued[0]).toMatchObject({ guid: mine, change: { feedUrl: 'https://quota.example/mine.xml' } });
    fault.restore();
    await settle(e);
    await checkInvariants({ engine: e, server: s, model });
  });

  it('quota in update(): it rejects with code quota and nothing is queued or shown', async () => {
    const s = await server({ seed: 3 });
    const e = engine(s);
    await e.sync();
    const before = picture(await e.subscriptions());
    const fault = failWrites(e.dbName);
    restore = fault.restore;
    const guid = s.state()[1]!.guid;
    await expect(e.update(guid, { isSubscribed: false })).rejects.toMatchObject({ name: 'SyncError', code: 'quota' });
    await expect(e.add('https://quota.example/new.xml')).rejects.toMatchObject({ code: 'quota' });
    fault.restore();
    expect(await e.pending()).toEqual([]);
    expect(picture(await e.subscriptions())).toEqual(before);
    await e.sync();
    expect(requests(s, 'PATCH')).toEqual([]);
  });

  it('quota while recording an acknowledgement: the server has the change, the queue keeps it, a replay is harmless', async () => {
    const s = await server({ seed: 4 });
    let fault: ReturnType<typeof failWrites> | undefined;
    let dbName = '';
    const e = engine(s, {
      fetch: spyFetch(async (url, init, real) => {
        const response = await real(url, init);
        // The server applied the PATCH; the store refuses to record the answer.
        if (init?.method === 'PATCH' && !fault) {
          fault = failWrites(dbName);
          restore = fault.restore;
        }
        return response;
      }),
    });
    dbName = e.dbName;
    const model = new Model();
    for (const view of s.state()) model.fromServer(view);
    await e.sync();
    const guid = s.state()[2]!.guid;
    await e.update(guid, { feedUrl: 'https://quota.example/acked.xml' });
    model.localUpdate(model.byHandle(guid)!, { feedUrl: 'https://quota.example/acked.xml' });
    const error = await e.sync().then(() => undefined, (err: unknown) => err);
    expect(s.entry(guid)?.feed_url).toBe('https://quota.example/acked.xml');
    expect(fault?.refused).toBeGreaterThan(0);
    if (error) expect(error).toMatchObject({ code: 'quota' });
    expect((await e.status()).lastError?.code).toBe('quota');
    // Still queued (the acknowledgement never made it to disk), read while the fault holds: the update's own
    // push, coalesced behind the sync, starts as it ends and may send the change again and record the answer
    // as soon as the fault is lifted.
    expect((await e.pending()).map((p) => p.guid)).toEqual([guid]);
    fault!.restore();
    // It goes again, once in effect.
    await settle(e);
    await checkInvariants({ engine: e, server: s, model });
  });
});

describe('chaos: the database goes away under an open engine', () => {
  it('deleted by another connection while idle: the engine keeps working and re-pulls everything', async () => {
    const s = await server({ seed: 7 });
    const e = engine(s);
    await e.sync();
    await Dexie.delete(e.dbName);
    // What the engine does next: reads work on a fresh, empty store; the next sync refills it.
    expect(await e.subscriptions()).toEqual([]);
    expect((await e.status()).cursor).toBeUndefined();
    await e.sync();
    expect(picture(await e.subscriptions())).toEqual(serverPicture(s));
    const model = new Model();
    for (const view of s.state()) model.fromServer(view);
    const guid = s.state()[0]!.guid;
    await e.update(guid, { isSubscribed: false });
    model.localUpdate(model.byHandle(guid)!, { isSubscribed: false });
    await settle(e);
    await checkInvariants({ engine: e, server: s, model });
  });

  for (const how of ['deleted', 'wiped by clear() in another tab'] as const) {
    // The pull that began before the wipe must not store its cursor in the wiped store (the engine compares
    // the store's epoch before writing it), so right after it the cursor claims nothing the store lacks.
    it(`${how} between the pages of a pull: the engine carries on and converges`, async () => {
      const s = await server({ seed: 20 });
      let lists = 0;
      let wipe: () => Promise<void> = async () => undefined;
      const e = engine(s, {
        pageSize: 3,
        fetch: spyFetch(async (url, init, real) => {
          if (url.pathname.endsWith('/subscriptions') && url.searchParams.has('since') && ++lists === 2) await wipe();
          return real(url, init);
        }),
      });
      await e.sync();
      const other = engine(s, { dbName: e.dbName, fetch: (() => Promise.reject(new TypeError('offline tab'))) as typeof fetch });
      wipe = how === 'deleted' ? () => Dexie.delete(e.dbName) : () => other.clear();
      const model = new Model();
      for (const view of s.state()) model.fromServer(view);
      for (const view of s.state().slice(0, 8)) {
        s.foreign.patch(view.guid, { new_feed_url: `https://wiped.example/${view.guid}.xml` });
        model.foreignPatch(model.byHandle(view.guid)!, { new_feed_url: `https://wiped.example/${view.guid}.xml` });
      }
      const outcome = await e.sync().then(
        () => 'done',
        (error: unknown) => (isSyncError(error) ? error.code : String(error)),
      );
      expect(lists).toBeGreaterThanOrEqual(2);
      // No raw IndexedDB error escapes: the run completes or fails as a SyncError.
      expect(['done', 'closed', 'bad-response']).toContain(outcome);
      expect(await cursorViolations(e.dbName, s)).toEqual([]);
      await other.close();
      await settle(e);
      await checkInvariants({ engine: e, server: s, model });
      expect((await readStore(e.dbName)).rows.length).toBe(s.state().length);
    });
  }
});
