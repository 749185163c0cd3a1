// In WebKit the engine holds at most one IndexedDB transaction at a time. WebKit leaves a database unable to
// run any transaction once a worker ends (a reload, a closed tab, terminate()) with two of them in flight,
// read-only or read-write, so however the worker ends, it must never have two there (see createStoreCore).
// Elsewhere they overlap (a pull's pages queue behind each other).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isWebKit } from '../../worker/store/core.ts';
import { engine, server, until } from './helpers.ts';

/**
 * Count every IndexedDB transaction from creation to complete/abort, per database. Dexie binds
 * `IDBDatabase.transaction` when it opens a database: install this before the engine opens its own.
 */
function countTransactions() {
  const proto = IDBDatabase.prototype;
  const original = proto.transaction;
  const live = new Map<string, number>();
  const most = new Map<string, number>();
  proto.transaction = function (this: IDBDatabase, ...args: Parameters<IDBDatabase['transaction']>) {
    const tx = original.apply(this, args);
    const name = this.name;
    const now = (live.get(name) ?? 0) + 1;
    live.set(name, now);
    most.set(name, Math.max(most.get(name) ?? 0, now));
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      live.set(name, live.get(name)! - 1);
    };
    tx.addEventListener('complete', end);
    tx.addEventListener('abort', end);
    return tx;
  } as IDBDatabase['transaction'];
  return {
    most: (name: string) => most.get(name) ?? 0,
    live: (name: string) => live.get(name) ?? 0,
    /** Count the most from now on. */
    reset: () => most.clear(),
    restore: () => void (proto.transaction = original),
  };
}

let restore: (() => void) | undefined;
afterEach(() => {
  restore?.();
  restore = undefined;
  vi.unstubAllGlobals();
});

const SAFARI = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.4 Safari/605.1.15';
const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36';

describe('which engines run one transaction at a time', () => {
  it('WebKit, by its user agent: Safari, iOS browsers, WebKitGTK; not Chromium-based ones, not Firefox', () => {
    expect(isWebKit(SAFARI)).toBe(true);
    expect(isWebKit('Mozilla/5.0 (iPhone; CPU iPhone OS 18_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/136.0.7103.56 Mobile/15E148 Safari/604.1')).toBe(true);
    expect(isWebKit('Mozilla/5.0 (X11; Ubuntu; Linux x86_64) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Safari/605.1.15')).toBe(true);
    expect(isWebKit(CHROME)).toBe(false);
    expect(isWebKit('Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/136.0.0.0 Mobile Safari/537.36')).toBe(false);
    expect(isWebKit('Mozilla/5.0 (X11; Linux x86_64; rv:153.0) Gecko/20100101 Firefox/153.0')).toBe(false);
    expect(isWebKit('')).toBe(false);
  });
});

describe('transactions', () => {
  it('in WebKit, never has two IndexedDB transactions in flight, whatever the app calls at once during a sync', async () => {
    vi.stubGlobal('navigator', { userAgent: SAFARI });
    const s = await server({ seed: 300, latencyMs: 5 });
    const count = countTransactions();
    restore = count.restore;
    const e = engine(s, { pushDelay: 0 });
    await e.sync();
    // Opening the database is Dexie's (its schema check has a transaction of its own): count from after it.
    count.reset();
    const guids = s.state().filter((x) => !x.deleted).map((x) => x.guid).slice(0, 12);
    s.foreign.patch(guids[0]!, { is_subscribed: false });

    const calls: Promise<unknown>[] = [e.sync().catch(() => undefined)];
    for (const [i, guid] of guids.entries()) {
      calls.push(
        e.update(guid, { isSubscribed: i % 2 === 0 }),
        e.status(),
        e.subscriptions(),
        e.subscription(guid),
        e.pending(),
        e.failed(),
      );
    }
    calls.push(e.add('https://one-at-a-time.example/feed.xml'));
    await Promise.all(calls);
    await until(async () => (await e.pending()).length === 0 && (await e.status()).phase === 'idle', 8000, 'the pushes to settle');
    await e.close();

    expect(count.most(e.dbName)).toBe(1);
    // A status read the close raced with still ends (close() does not wait for it): none is left behind.
    await until(() => count.live(e.dbName) === 0, 5000, 'every transaction to end');
  });

  it('elsewhere, lets a first pull queue its pages behind each other', async () => {
    vi.stubGlobal('navigator', { userAgent: CHROME });
    const s = await server({ seed: 60 });
    const count = countTransactions();
    restore = count.restore;
    const e = engine(s, { pageSize: 5 });
    await e.sync();
    expect(await e.subscriptions()).toHaveLength(60);
    expect(count.most(e.dbName)).toBeGreaterThan(1);
    await e.close();
  });
});
