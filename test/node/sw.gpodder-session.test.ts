// Background Sync over gPodder without a stored password (issue 34): with `auth: { type: 'session' }` the engine
// logs in once (`POST /api/2/auth/{user}/login.json`), then sends the session cookie the server set and never the
// password; the store is registered for the service worker as needing no credentials, and the service worker,
// given none, pushes what a closed page left with the cookie alone. The browser's cookie jar is modelled by a
// fetch that keeps `Set-Cookie` and sends `Cookie` (Node's fetch keeps none).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startGpodderServer } from '../server/gpodder/server.ts';
import type { GpodderDialect, GpodderServer } from '../server/gpodder/types.ts';
import { createSyncEngine } from '../../worker/index.ts';
import { serveBackgroundSync } from '../../worker/sw.ts';
import { fakeSelf, forgetStores } from './fake-sw.ts';
import { knownStores } from '../../worker/sw-registry.ts';
import { dump, uniqueDb } from './helpers.ts';
import { startOpodsync } from '../support/opodsync.ts';
import { describeOpodsync } from '../support/opodsync-suite.ts';

const PASSWORD = 'alice-password';
const FEED = 'https://feeds.example/session/left-behind.xml';
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close().catch(() => undefined);
});
beforeEach(forgetStores);

/** The origin's cookie jar, shared by every fetch made with it (a page's and its service worker's). */
function cookieJar() {
  let cookie: string | undefined;
  const sent: { path: string; authorization: boolean; cookie: boolean }[] = [];
  const fetchWithJar: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    if (cookie && init?.credentials !== 'omit') headers.set('Cookie', cookie);
    sent.push({ path: new URL(String(input)).pathname, authorization: headers.has('Authorization'), cookie: headers.has('Cookie') });
    const response = await fetch(input, { ...init, headers });
    const set = response.headers.get('Set-Cookie');
    if (set && init?.credentials !== 'omit') cookie = set.split(';')[0];
    return response;
  };
  return { fetch: fetchWithJar, sent };
}

describe('a gPodder session login', () => {
  for (const dialect of ['opodsync', 'mygpo'] satisfies GpodderDialect[]) {
    it(`${dialect}: one login with the password, then the cookie only; the service worker sends with no credentials; no password stored`, async () => {
      const s: GpodderServer = await startGpodderServer({ port: 0, dialect });
      open.push(s);
      const jar = cookieJar();
      const dbName = uniqueDb(`session-${dialect}`);
      const page = createSyncEngine({
        protocol: 'gpodder', baseUrl: s.url, device: 'web-player', dbName, pullInterval: 0, pushDelay: 0, backgroundSync: true,
        auth: { type: 'session', username: 'alice', password: PASSWORD }, fetch: jar.fetch, retry: { baseDelay: 60_000, maxDelay: 60_000 },
      });
      open.push(page);
      await page.sync();
      expect(jar.sent.filter((r) => r.authorization).map((r) => r.path)).toEqual(['/api/2/auth/alice/login.json']);
      expect(jar.sent.slice(1).every((r) => r.cookie && !r.authorization)).toBe(true);
      // The page goes while the server fails: the change waits for the service worker.
      s.failNext(1000, 503);
      await page.add(FEED);
      await page.sync().catch(() => undefined);
      expect((await page.status()).pending).toBe(1);
      await page.close();
      s.clearFaults();
      expect(await knownStores()).toMatchObject([{ dbName, authed: false, account: 'alice' }]);
      const self = fakeSelf();
      // No auth provider at all: the cookie is the credential.
      serveBackgroundSync({ target: self.target, budget: 20_000, baseDelay: 20, fetch: jar.fetch });
      const before = jar.sent.length;
      await expect(self.fire()).resolves.toEqual(['sent']);
      expect(s.subscribed({ device: 'web-player' })).toContain(FEED);
      expect(jar.sent.slice(before).every((r) => r.cookie && !r.authorization)).toBe(true);
      expect(await dump(dbName)).not.toContain(PASSWORD);
    });
  }

  it('is gPodder’s: another protocol refuses it with a clear error', () => {
    expect(() => createSyncEngine({ protocol: 'nextcloud', baseUrl: 'http://127.0.0.1:9/', auth: { type: 'session', username: 'a', password: 'b' } })).toThrow(/gPodder's login/);
  });
});

describeOpodsync('a gPodder session login against the real opodsync', () => {
  it('one login with the password, then its sessionid cookie only: pulls, uploads and the service worker\'s push go through', async () => {
    const peer = await startOpodsync();
    open.push({ close: () => peer.stop() });
    const jar = cookieJar();
    const dbName = uniqueDb('session-opodsync');
    const page = createSyncEngine({
      protocol: 'gpodder', baseUrl: peer.baseUrl, device: 'web-player', dbName, pullInterval: 0, pushDelay: 0, backgroundSync: true,
      auth: { type: 'session', username: peer.username, password: peer.password }, fetch: jar.fetch, retry: { baseDelay: 60_000, maxDelay: 60_000 },
    });
    open.push(page);
    await page.add('https://feeds.example/session/first.xml');
    await page.sync();
    expect(jar.sent.filter((r) => r.authorization).map((r) => r.path)).toEqual([`/api/2/auth/${peer.username}/login.json`]);
    expect(jar.sent.slice(1).every((r) => r.cookie && !r.authorization)).toBe(true);
    expect((await page.status()).pending).toBe(0);
    // Left for the service worker: the page closes with a change queued (never sent), the worker has no credentials.
    await page.close();
    const next = createSyncEngine({ protocol: 'gpodder', baseUrl: peer.baseUrl, device: 'web-player', dbName, pullInterval: 0, account: peer.username, fetch: () => Promise.reject(new TypeError('offline')) });
    await next.add(FEED);
    await next.close();
    const self = fakeSelf();
    serveBackgroundSync({ target: self.target, budget: 20_000, baseDelay: 20, fetch: jar.fetch });
    const before = jar.sent.length;
    await expect(self.fire()).resolves.toEqual(['sent']);
    expect(jar.sent.slice(before).every((r) => r.cookie && !r.authorization)).toBe(true);
    const check = createSyncEngine({
      protocol: 'gpodder', baseUrl: peer.baseUrl, device: 'web-player', dbName: uniqueDb('session-check'), pullInterval: 0,
      auth: { type: 'basic', username: peer.username, password: peer.password },
    });
    open.push(check);
    await check.sync();
    expect((await check.subscriptions()).map((s) => s.feedUrl)).toEqual(expect.arrayContaining([FEED, 'https://feeds.example/session/first.xml']));
    expect(await dump(dbName)).not.toContain(peer.password);
  });
});
