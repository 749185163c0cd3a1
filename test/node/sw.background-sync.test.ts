// opa-sync/sw: a service worker pushes what a closed page left queued, with the engine's own rules.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { openSyncDatabase } from '../../src/schema.ts';
import { rememberStore } from '../../worker/sw-registry.ts';
import { serveBackgroundSync, type BackgroundSyncOptions } from '../../worker/sw.ts';
import { fakeSelf, forgetStores, queuedIn } from './fake-sw.ts';
import { TOKEN, dump, engine, requests, server } from './helpers.ts';
import type { RefServer } from '../server/types.ts';

const FEED = 'https://feeds.example.com/left-behind.xml';

/** A page (with backgroundSync) that queues a subscription while the server answers 503, then closes. */
async function closedPageWithChange(s: RefServer): Promise<string> {
  s.failNext(1000, 503);
  const page = engine(s, { backgroundSync: true, retry: { baseDelay: 60_000, maxDelay: 60_000 } });
  await page.add(FEED);
  await page.sync().catch(() => undefined);
  expect((await page.status()).pending).toBe(1);
  await page.close();
  s.clearFaults();
  s.clearLog();
  return page.dbName;
}

const bearer: BackgroundSyncOptions['auth'] = () => ({ type: 'bearer', token: TOKEN });

describe('serveBackgroundSync', () => {
  beforeEach(forgetStores);

  it('pushes a closed page’s change on the sync tag: once on the server, the outbox empty, no credential stored', async () => {
    const s = await server();
    const dbName = await closedPageWithChange(s);
    const self = fakeSelf();
    // It ends as soon as nothing waits, well before its budget.
    serveBackgroundSync({ auth: bearer, target: self.target, budget: 30_000 });
    await expect(self.fire()).resolves.toEqual(['sent']);
    expect(requests(s, 'POST', '/subscriptions')).toHaveLength(1);
    expect(s.state().filter((e) => e.feed_url === FEED)).toHaveLength(1);
    expect(await queuedIn(dbName)).toBe(0);
    expect(await dump(dbName)).not.toContain(TOKEN);
  });

  it('sends nothing without credentials for a store whose page sent some (no provider, or undefined from it)', async () => {
    const s = await server();
    const dbName = await closedPageWithChange(s);
    for (const auth of [undefined, () => undefined]) {
      const self = fakeSelf();
      serveBackgroundSync({ ...(auth ? { auth } : {}), target: self.target, budget: 0 });
      await expect(self.fire()).resolves.toEqual(['skipped']);
    }
    expect(s.log()).toHaveLength(0);
    expect(await queuedIn(dbName)).toBe(1);
  });

  it('a 5xx: waitUntil rejects (the browser tries again) and everything stays queued; on lastChance it stays without a rejection', async () => {
    const s = await server();
    const dbName = await closedPageWithChange(s);
    s.failNext(1000, 503);
    const self = fakeSelf();
    serveBackgroundSync({ auth: bearer, target: self.target, budget: 0 });
    await expect(self.fire()).rejects.toThrow(/still wait/);
    expect(await queuedIn(dbName)).toBe(1);
    await expect(self.fire('opa-sync', true)).resolves.toEqual(['waiting']);
    expect(await queuedIn(dbName)).toBe(1);
    expect(s.state().filter((e) => e.feed_url === FEED)).toHaveLength(0);
  });

  it('retries inside the event with backoff: a short outage is bridged by the same event', async () => {
    const s = await server();
    const dbName = await closedPageWithChange(s);
    s.failNext(2, 503);
    const self = fakeSelf();
    serveBackgroundSync({ auth: bearer, target: self.target, budget: 20_000, baseDelay: 20 });
    await expect(self.fire()).resolves.toEqual(['sent']);
    expect(await queuedIn(dbName)).toBe(0);
  });

  it('a device clock step forward during the event does not end its retry budget (a duration, not wall time)', async () => {
    const s = await server();
    const dbName = await closedPageWithChange(s);
    const realNow = Date.now.bind(Date);
    let offset = 0;
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + offset);
    try {
      // An hour forward at the first request: the outage (2 answers) is still bridged by the same event.
      s.failNext(2, 503);
      const forward = fakeSelf();
      let calls = 0;
      const stepping: typeof fetch = (input, init) => (++calls === 1 && (offset = 3_600_000), fetch(input, init));
      serveBackgroundSync({ auth: bearer, target: forward.target, budget: 20_000, baseDelay: 20, fetch: stepping });
      await expect(forward.fire()).resolves.toEqual(['sent']);
      expect(await queuedIn(dbName)).toBe(0);
    } finally {
      clock.mockRestore();
    }
  });

  it('a device clock step back during the event does not stretch its budget: it ends, with few requests', async () => {
    const s = await server();
    const dbName = await closedPageWithChange(s);
    s.failNext(1000, 503);
    const realNow = Date.now.bind(Date);
    let offset = 0;
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + offset);
    try {
      const back = fakeSelf();
      let calls = 0;
      const stepping: typeof fetch = (input, init) => (++calls === 1 && (offset = -3_600_000), fetch(input, init));
      serveBackgroundSync({ auth: bearer, target: back.target, budget: 300, baseDelay: 20, fetch: stepping });
      await expect(back.fire()).rejects.toThrow(/still wait/);
      // 300 ms of retries from 20 ms apart, doubling: a handful of tries, not an hour's worth.
      expect(calls).toBeGreaterThan(1);
      expect(calls).toBeLessThan(12);
      expect(await queuedIn(dbName)).toBe(1);
    } finally {
      clock.mockRestore();
    }
  });

  it('leaves alone a store of a newer schema than its code: nothing sent, the store untouched', async () => {
    const s = await server();
    const dbName = `newer-${Date.now()}`;
    const newer = await new Promise<IDBDatabase>((resolve, reject) => {
      const r = indexedDB.open(dbName, 100_000);
      r.onupgradeneeded = () => void r.result.createObjectStore('future');
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
    newer.close();
    await rememberStore({ dbName, baseUrl: s.url, protocol: 'opa', device: 'opa-sync', authed: true });
    const self = fakeSelf();
    serveBackgroundSync({ auth: bearer, target: self.target, budget: 0 });
    await expect(self.fire()).resolves.toEqual(['skipped']);
    expect(s.log()).toHaveLength(0);
    const after = await new Promise<IDBDatabase>((resolve, reject) => {
      const r = indexedDB.open(dbName);
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
    expect([after.version, [...after.objectStoreNames]]).toEqual([100_000, ['future']]);
    after.close();
  });

  it('a schema upgrade from a new tab is not blocked by the service worker mid-event: it closes and leaves the store', async () => {
    const s = await server();
    const dbName = await closedPageWithChange(s);
    s.failNext(1_000_000, 503);
    const self = fakeSelf();
    serveBackgroundSync({ auth: bearer, target: self.target, budget: 30_000, baseDelay: 50 });
    const event = self.fire();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const upgraded = await new Promise<number>((resolve, reject) => {
      const r = indexedDB.open(dbName, 1000);
      r.onblocked = () => reject(new Error('blocked by the service worker'));
      r.onsuccess = () => {
        r.result.close();
        resolve(r.result.version);
      };
      r.onerror = () => reject(r.error);
    });
    expect(upgraded).toBe(1000);
    // The event ends soon after (not at its 30 s budget) with the store left to the newer code.
    await expect(event).resolves.toEqual(['skipped']);
  });

  it('a signed-out store (clear() after the change) is not synced again: no request, no binding', async () => {
    const s = await server();
    const dbName = await closedPageWithChange(s);
    const page = engine(s, { dbName });
    await page.clear();
    await page.close();
    s.clearLog();
    const self = fakeSelf();
    serveBackgroundSync({ auth: bearer, target: self.target, budget: 0 });
    await expect(self.fire()).resolves.toEqual(['sent']);
    expect(s.log()).toHaveLength(0);
    expect(await dump(dbName)).not.toContain('binding');
  });

  it('answers only its tag', async () => {
    const s = await server();
    await closedPageWithChange(s);
    const self = fakeSelf();
    serveBackgroundSync({ auth: bearer, target: self.target, budget: 0 });
    await expect(self.fire('another-tag')).resolves.toBe('no waitUntil');
    expect(s.log()).toHaveLength(0);
  });
});
