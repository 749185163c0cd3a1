// The engine (Node, fake-indexeddb) against the real opodsync, a gPodder v2 / Nextcloud server no one on this
// project wrote, over real HTTP, in both path families. Another device's changes go in with plain HTTP.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Protocol } from '../../src/types.ts';
import { createSyncEngine, type SyncEngine } from '../../worker/index.ts';
import { startOpodsync, type Opodsync } from '../support/opodsync.ts';
import { describeOpodsync } from '../support/opodsync-suite.ts';
import { settle, uniqueDb } from './helpers.ts';

const feed = (run: string, n: number | string) => `https://feeds.example/${run}/show-${n}.xml`;

describeOpodsync('interop: the engine against the real opodsync', () => {
  let server: Opodsync;
  beforeAll(async () => {
    server = await startOpodsync();
  }, 30_000);
  afterAll(() => server?.stop());

  const engines: SyncEngine[] = [];
  afterEach(async () => {
    while (engines.length) await engines.pop()!.close();
  });

  function engine(protocol: Exclude<Protocol, 'opa'>, password = server.password): SyncEngine {
    const e = createSyncEngine({
      protocol,
      baseUrl: server.baseUrl,
      auth: { type: 'basic', username: server.username, password },
      device: 'web-player',
      dbName: uniqueDb(`opodsync-${protocol}`),
      pullInterval: 0,
      pushDelay: 0,
      timeout: 5000,
      retry: { baseDelay: 20, maxDelay: 200 },
    });
    engines.push(e);
    return e;
  }

  /** Another device (a phone) uploading with plain HTTP. */
  async function phone(change: { add?: string[]; remove?: string[] }): Promise<void> {
    const auth = `Basic ${Buffer.from(`${server.username}:${server.password}`).toString('base64')}`;
    const response = await fetch(`${server.baseUrl}/api/2/subscriptions/${server.username}/phone.json`, {
      method: 'POST',
      headers: { Authorization: auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ add: change.add ?? [], remove: change.remove ?? [] }),
    });
    expect(response.status).toBe(200);
  }

  /** What the server holds subscribed, read with plain HTTP. */
  async function subscribed(): Promise<Set<string>> {
    const auth = `Basic ${Buffer.from(`${server.username}:${server.password}`).toString('base64')}`;
    const response = await fetch(`${server.baseUrl}/api/2/subscriptions/${server.username}/phone.json?since=0`, { headers: { Authorization: auth } });
    return new Set(((await response.json()) as { add: string[] }).add);
  }

  describe.each(['gpodder', 'nextcloud'] as const)('%s paths', (protocol) => {
    const run = `${protocol}-${Date.now()}`;

    it('first sync of an existing account, then another device\'s changes come down', async () => {
      await phone({ add: [feed(run, 1), feed(run, 2), feed(run, 3)] });
      const e = engine(protocol);
      await e.sync();
      const mine = (await e.subscriptions()).filter((s) => s.guid.includes(run));
      expect(mine.map((s) => s.guid).sort()).toEqual([feed(run, 1), feed(run, 2), feed(run, 3)]);
      await phone({ add: [feed(run, 4)], remove: [feed(run, 1)] });
      await e.sync();
      expect(await e.subscription(feed(run, 1))).toMatchObject({ isSubscribed: false });
      expect(await e.subscription(feed(run, 4))).toMatchObject({ isSubscribed: true, pending: false });
    });

    it('changes made offline replay in one upload; a feed URL change is a remove and an add', async () => {
      await phone({ add: [feed(run, 'a'), feed(run, 'b')] });
      const e = engine(protocol);
      await e.sync();
      e.setOnline(false);
      await e.add(feed(run, 'c'));
      await e.update(feed(run, 'a'), { isSubscribed: false });
      await e.update(feed(run, 'b'), { feedUrl: feed(run, 'b2') });
      expect(await e.pending()).toHaveLength(3);
      e.setOnline(true);
      const report = await e.sync();
      expect(report).toMatchObject({ pushed: 3, failed: 0, pending: 0 });
      // One pull of subscriptions, one of episode actions, and one upload carrying all three changes.
      expect(report.requests).toBe(3);
      const now = await subscribed();
      expect(now.has(feed(run, 'c'))).toBe(true);
      expect(now.has(feed(run, 'a'))).toBe(false);
      expect(now.has(feed(run, 'b'))).toBe(false);
      expect(now.has(feed(run, 'b2'))).toBe(true);
      await e.sync();
      expect(await e.subscription(feed(run, 'b'))).toMatchObject({ guid: feed(run, 'b2'), isSubscribed: true, pending: false });
    });

    it('a URL opodsync refuses fails alone, with the server\'s message; the rest of the upload is stored', async () => {
      const e = engine(protocol);
      await e.sync();
      e.setOnline(false);
      await e.add(feed(run, 'good-1'));
      await e.add(`HTTPS://feeds.example/${run}/LOUD.xml`);
      await e.add(feed(run, 'good-2'));
      e.setOnline(true);
      await settle(e);
      const now = await subscribed();
      expect(now.has(feed(run, 'good-1')) && now.has(feed(run, 'good-2'))).toBe(true);
      const failed = await e.failed();
      expect(failed).toHaveLength(1);
      expect(failed[0]!.reason).toMatchObject({ code: 'invalid', status: 400 });
      expect(failed[0]!.reason.message).toMatch(/Invalid URL/);
    });

    it('wrong credentials pause the queue with auth-required; setAuth resumes it', async () => {
      const e = engine(protocol, 'wrong-password');
      await expect(e.sync()).rejects.toMatchObject({ code: 'unauthorized', status: 401 });
      await e.add(feed(run, 'after-login'));
      expect((await e.status()).phase).toBe('auth-required');
      await e.setAuth({ type: 'basic', username: server.username, password: server.password });
      await settle(e);
      expect((await subscribed()).has(feed(run, 'after-login'))).toBe(true);
    });

    it('the server stopped mid-queue: changes wait, then go once it is back', async () => {
      const e = engine(protocol);
      await e.sync();
      await server.stop();
      await e.add(feed(run, 'while-down'));
      await expect(e.sync()).rejects.toMatchObject({ code: 'network' });
      expect(await e.pending()).toHaveLength(1);
      await server.restart();
      await settle(e);
      expect((await subscribed()).has(feed(run, 'while-down'))).toBe(true);
    }, 30_000);
  });
});
