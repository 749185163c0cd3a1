// opa-sync/sw's rounds follow the engine's rules (issue 31 item 5, issue 34): the server's Retry-After holds the
// next attempt, `auth-required` ends the event without asking the browser for a retry, and while a tab leads
// the service worker only watches (the tab sends, with its own backoff) until the tab is gone.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { serveBackgroundSync, type BackgroundSyncOptions } from '../../worker/sw.ts';
import { fakeSelf, forgetStores, queuedIn } from './fake-sw.ts';
import { TOKEN, engine, server, uniqueDb, until } from './helpers.ts';
import type { RefServer } from '../server/types.ts';

const FEED = 'https://feeds.example.com/rounds.xml';
const bearer: BackgroundSyncOptions['auth'] = () => ({ type: 'bearer', token: TOKEN });

/** Web Locks as a browser has them, in one process: one holder per name, the next waiter once it ends. */
function installLocks() {
  const before = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
  const queues = new Map<string, Array<() => void>>();
  const held = new Set<string>();
  const next = (name: string) => {
    const waiter = queues.get(name)?.shift();
    if (waiter) waiter();
    else held.delete(name);
  };
  Object.defineProperty(globalThis, 'navigator', {
    configurable: true,
    value: {
      locks: {
        request(name: string, options: { signal?: AbortSignal }, callback: () => Promise<void>) {
          return new Promise<void>((resolve, reject) => {
            // Granted asynchronously, as a browser does.
            const run = () => queueMicrotask(() => void callback().finally(() => next(name)).then(resolve, reject));
            if (!held.has(name)) {
              held.add(name);
              run();
              return;
            }
            const queue = queues.get(name) ?? [];
            queues.set(name, queue);
            queue.push(run);
            options.signal?.addEventListener('abort', () => {
              const at = queue.indexOf(run);
              if (at >= 0) queue.splice(at, 1);
              reject(new DOMException('aborted', 'AbortError'));
            });
          });
        },
      },
    },
  });
  return () => (before ? Object.defineProperty(globalThis, 'navigator', before) : delete (globalThis as { navigator?: unknown }).navigator);
}

/** A page (with backgroundSync) that queued FEED while the server answered 503; its change held for a minute. */
async function pageWithChange(s: RefServer, dbName = uniqueDb('rounds')) {
  s.failNext(1000, 503);
  const page = engine(s, { dbName, backgroundSync: true, retry: { baseDelay: 60_000, maxDelay: 60_000 } });
  await page.add(FEED);
  await page.sync().catch(() => undefined);
  expect((await page.status()).pending).toBe(1);
  s.clearFaults();
  s.clearLog();
  return page;
}

describe('the service worker’s rounds', () => {
  beforeEach(forgetStores);

  it('a 401: the event ends without a rejection (no browser retry with the refused credentials), one request, the change kept', async () => {
    const s = await server();
    const page = await pageWithChange(s);
    await page.close();
    s.failNext(1000, 401);
    const self = fakeSelf();
    serveBackgroundSync({ auth: bearer, target: self.target, budget: 5_000, baseDelay: 20 });
    await expect(self.fire()).resolves.toEqual(['auth-required']);
    expect(s.log()).toHaveLength(1);
    const next = engine(s, { dbName: page.dbName });
    expect((await next.pending()).map((c) => c.feedUrl)).toEqual([FEED]);
    await next.close();
  });

  it("the server's Retry-After holds the next attempt (a lower bound: nothing goes sooner)", async () => {
    const s = await server();
    const page = await pageWithChange(s);
    await page.close();
    s.failNext(1, 503, { method: 'GET' }, { retryAfter: 1 });
    const self = fakeSelf();
    serveBackgroundSync({ auth: bearer, target: self.target, budget: 20_000, baseDelay: 20 });
    await expect(self.fire()).resolves.toEqual(['sent']);
    const [refused, ...later] = s.log();
    expect(refused).toMatchObject({ method: 'GET', status: 503 });
    expect(later.length).toBeGreaterThan(0);
    for (const entry of later) expect(entry.at - refused!.at).toBeGreaterThanOrEqual(990);
    expect(s.state().filter((e) => e.feed_url === FEED)).toHaveLength(1);
  });

  describe('with Web Locks', () => {
    let restore: () => unknown = () => undefined;
    beforeEach(() => void (restore = installLocks()));
    afterEach(() => void restore());

    it('while a tab leads, the service worker only watches (no run forced on the tab); once the tab closes, it sends', async () => {
      const s = await server();
      const page = await pageWithChange(s);
      s.failNext(1_000_000, 503);
      expect((await page.status()).leader).toBe(true);
      // What the contexts of this store ask each other: a run forced on the leader is a `sync-request` (or `pull`).
      const asked: string[] = [];
      const channel = new BroadcastChannel(`opa-sync:${page.dbName}`);
      channel.onmessage = (event: MessageEvent<{ type: string }>) => void asked.push(event.data.type);
      const self = fakeSelf();
      serveBackgroundSync({ auth: bearer, target: self.target, budget: 20_000, baseDelay: 20 });
      const event = self.fire();
      await until(() => asked.includes('hello'), 5000, 'the service worker’s engine started');
      await new Promise((resolve) => setTimeout(resolve, 600));
      channel.close();
      expect(asked.filter((type) => type === 'sync-request' || type === 'pull')).toEqual([]);
      s.clearFaults();
      await page.close();
      await expect(event).resolves.toEqual(['sent']);
      expect(s.state().filter((e) => e.feed_url === FEED)).toHaveLength(1);
    });
  });
});
