// Errors cross the comlink boundary as SyncErrors with code and status; close() terminates the worker.
import { describe, expect, it } from 'vitest';
import { clientOptions, openPage, pageErrors, sleep, harnessPerFile, forEachEngine, uniqueDbName, waitFor } from './support/harness.ts';

forEachEngine((engine) => {
  const h = harnessPerFile(engine, { seed: 4 });

  /** What the page sees of a rejected call (evaluated in the page). */
  interface Seen {
    outcome: 'resolved' | 'rejected';
    name?: string;
    code?: string;
    status?: number;
    message?: string;
    isSyncError?: boolean;
    instanceOfSyncError?: boolean;
  }

  describe('errors across the worker boundary', () => {
    it('keeps code and status, and isSyncError holds on the page', async () => {
      const context = await h.browser.newContext();
      const page = await openPage(context, h.pages.url, clientOptions(h.server, uniqueDbName('errors')));
      await page.evaluate(() => window.opa.client.sync());
      const guid = h.server.state()[0].guid;

      const seen = await page.evaluate(async (g) => {
        const { client, lib } = window.opa;
        const attempt = async (run: () => Promise<unknown>): Promise<Seen> => {
          try {
            await run();
            return { outcome: 'resolved' };
          } catch (e) {
            const err = e as { name?: string; code?: string; status?: number; message?: string };
            return {
              outcome: 'rejected',
              name: err.name,
              code: err.code,
              status: err.status,
              message: err.message,
              isSyncError: lib.isSyncError(e),
              instanceOfSyncError: e instanceof lib.SyncError,
            };
          }
        };
        return {
          badFeed: await attempt(() => client.update(g, { feedUrl: 'ftp://example.com/feed.xml' })),
          emptyChange: await attempt(() => client.update(g, {})),
          unknownGuid: await attempt(() => client.update('no-such-guid', { isSubscribed: false })),
          badAdd: await attempt(() => client.add('javascript:alert(1)')),
          // The server answers 404: the HTTP status must survive the trip.
          unknownDeletion: await attempt(() => client.deletion(987_654)),
        };
      }, guid);

      expect(seen.badFeed).toMatchObject({ outcome: 'rejected', name: 'SyncError', code: 'invalid', isSyncError: true, instanceOfSyncError: true });
      expect(seen.badFeed.status).toBeUndefined();
      expect(seen.badFeed.message).toContain('ftp://example.com/feed.xml');
      expect(seen.emptyChange).toMatchObject({ outcome: 'rejected', code: 'invalid', isSyncError: true });
      expect(seen.unknownGuid).toMatchObject({ outcome: 'rejected', code: 'not-found', isSyncError: true });
      expect(seen.badAdd).toMatchObject({ outcome: 'rejected', code: 'invalid', isSyncError: true });
      expect(seen.unknownDeletion).toMatchObject({ outcome: 'rejected', code: 'not-found', status: 404, isSyncError: true, instanceOfSyncError: true });

      // Nothing was queued by the refused calls.
      expect(await page.evaluate(() => window.opa.client.pending())).toEqual([]);
      expect(await pageErrors(page)).toEqual([]);
      await context.close();
    });

    it("carries the worker's own refusals: options it rejects at start, a store bound to another account", async () => {
      const context = await h.browser.newContext();
      // pageSize is checked in the worker (the page only checks baseUrl): every call reports the refusal.
      const bad = await openPage(context, h.pages.url, clientOptions(h.server, uniqueDbName('bad-options'), { pageSize: 0 }));
      const refused = await bad.evaluate(() =>
        window.opa.client.status().then(
          () => undefined,
          (e: { code?: string; message?: string }) => ({ code: e.code, message: e.message, isSyncError: window.opa.lib.isSyncError(e) }),
        ),
      );
      expect(refused).toMatchObject({ code: 'invalid', isSyncError: true });
      expect(refused!.message).toContain('pageSize');

      const dbName = uniqueDbName('account');
      const alice = await openPage(context, h.pages.url, clientOptions(h.server, dbName, { account: 'alice' }));
      await alice.evaluate(() => window.opa.client.sync());
      await alice.evaluate(() => window.opa.client.close());
      const bob = await openPage(context, h.pages.url, clientOptions(h.server, dbName, { account: 'bob' }));
      const mismatch = await bob.evaluate(() =>
        window.opa.client.subscriptions().then(
          (list) => ({ code: 'none', count: list.length }),
          (e: { code?: string }) => ({ code: e.code, count: -1 }),
        ),
      );
      expect(mismatch).toEqual({ code: 'account-mismatch', count: -1 });
      await context.close();
    });

    it('a worker that fails to load makes every call reject with unsupported, instead of hanging, and status (and the store) say so', async () => {
      const context = await h.browser.newContext();
      const page = await openPage(context, h.pages.url, clientOptions(h.server, uniqueDbName('no-worker')));
      const seen = await page.evaluate(async (baseUrl) => {
        const { lib } = window.opa;
        const client = lib.createSyncClient({ baseUrl, dbName: 'never-opened', worker: new Worker('/no-such-worker.js', { type: 'module' }) });
        const store = client.store();
        const first = store.getSnapshot().status.phase;
        const outcome = await client.subscriptions().then(
          () => ({ code: 'resolved', message: '', isSyncError: false }),
          (e: { code?: string; message?: string }) => ({ code: e.code, message: e.message ?? '', isSyncError: lib.isSyncError(e) }),
        );
        const status = await client.status();
        // The store's read failed the same way: it shows the error and the status, and does not try again.
        while (!store.getSnapshot().error) await new Promise((r) => setTimeout(r, 10));
        const snap = store.getSnapshot();
        await client.close();
        return { ...outcome, first, status, snap: { ready: snap.ready, error: snap.error?.code, phase: snap.status.phase } };
      }, h.server.url);
      expect(seen).toMatchObject({ code: 'unsupported', isSyncError: true, first: 'starting' });
      expect(seen.message).toContain('failed to load');
      expect(seen.status).toMatchObject({ phase: 'unavailable', online: false, leader: false, lastError: { code: 'unsupported' } });
      expect(seen.snap).toEqual({ ready: false, error: 'unsupported', phase: 'unavailable' });
      await context.close();
    });

    it('lists a change the server refused in failed() with the reason as data', async () => {
      const context = await h.browser.newContext();
      const page = await openPage(context, h.pages.url, clientOptions(h.server, uniqueDbName('refused')));
      await page.evaluate(() => window.opa.client.sync());
      const guid = h.server.state()[0].guid;
      h.server.failNext(1, 422, { method: 'PATCH' });
      await page.evaluate((g) => window.opa.client.update(g, { isSubscribed: false }), guid);
      const failed = await waitFor('the refused change in failed()', async () => {
        const list = await page.evaluate(() => window.opa.client.failed());
        return list.length ? list : undefined;
      });
      expect(failed).toHaveLength(1);
      expect(failed[0]).toMatchObject({ guid, kind: 'update', reason: { code: 'invalid', status: 422 } });
      expect(await page.evaluate(() => window.opa.client.status())).toMatchObject({ failed: 1, pending: 0 });
      await context.close();
    });
  });

  describe('close()', () => {
    it('terminates the worker; later calls reject with closed and nothing more reaches the server', async () => {
      const context = await h.browser.newContext();
      const live = await openPage(context, h.pages.url, clientOptions(h.server, uniqueDbName('close')));
      // The worker answers a message at once while it runs (the same probe must fail after close()).
      expect(await live.evaluate(() => window.opa.workerAnswers(5000))).toBe(true);
      await live.evaluate(() => window.opa.client.sync());

      // Alive: a change the server keeps refusing with 503 is retried on a backoff timer.
      const guid = h.server.state()[0].guid;
      h.server.failNext(10_000, 503, { method: 'PATCH' });
      await live.evaluate((g) => window.opa.client.update(g, { isSubscribed: false }), guid);
      await waitFor('retries', () => h.server.log().filter((e) => e.method === 'PATCH').length >= 3);

      // A sync the server is slow to answer is under way when close() comes: it settles as 'closed'.
      h.server.setLatency(2000);
      const before = h.server.log().length;
      await live.evaluate(() => {
        window.opa.scratch.inFlight = window.opa.client.sync().then(
          () => 'resolved',
          (e: { code?: string }) => e.code,
        );
      });
      await waitFor('the slow pull to be under way', () => h.server.log().slice(before).some((e) => e.method === 'GET' && e.status === 0));
      const result = await live.evaluate(async () => {
        await window.opa.client.close();
        const codes: (string | undefined)[] = [];
        for (const call of [() => window.opa.client.status(), () => window.opa.client.sync(), () => window.opa.client.update('x', { isSubscribed: true })]) {
          codes.push(await call().then(() => 'resolved', (e: { code?: string }) => e.code));
        }
        return {
          codes,
          isError: await window.opa.client.pending().catch((e) => window.opa.lib.isSyncError(e)),
          inFlight: await (window.opa.scratch.inFlight as Promise<string>),
        };
      });
      h.server.setLatency(0);
      expect(result.inFlight).toBe('closed');
      expect(result.codes).toEqual(['closed', 'closed', 'closed']);
      expect(result.isError).toBe(true);
      // Terminated: a message to it gets no answer (a live worker answered within milliseconds above).
      expect(await live.evaluate(() => window.opa.workerAnswers(2000))).toBe(false);

      const after = h.server.log().length;
      await sleep(1200); // past several retry delays (100-500 ms)
      expect(h.server.log().length).toBe(after);
      expect(await pageErrors(live)).toEqual([]);
      await context.close();
    });
  });
});
