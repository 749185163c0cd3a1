// The page opens the same database with the package's openSyncDatabase and watches it with Dexie's
// liveQuery: writes the worker makes (local edits, acknowledgements, pulls) reach the page's observers.
import { describe, expect, it } from 'vitest';
import { clientOptions, openPage, pageErrors, harnessPerFile, forEachEngine, uniqueDbName, waitFor } from './support/harness.ts';

forEachEngine((engine) => {
  const h = harnessPerFile(engine, { seed: 5 });

  interface Row {
    guid: string;
    feedUrl: string;
    isSubscribed: boolean;
    pending: number;
  }

  describe('liveQuery on the page', () => {
    it("reflects the worker's writes in the page's own Dexie observers", async () => {
      const context = await h.browser.newContext();
      const dbName = uniqueDbName('live');
      const page = await openPage(context, h.pages.url, clientOptions(h.server, dbName));
      const [target] = h.server.state().filter((e) => e.is_subscribed && !e.deleted);

      // Subscribe before anything is in the database: the first pull itself must show up.
      await page.evaluate(
        ({ dbName, guid }) => {
          const { lib, scratch } = window.opa;
          const db = lib.openSyncDatabase(dbName);
          const rows: unknown[] = [];
          const counts: number[] = [];
          scratch.rows = rows;
          scratch.counts = counts;
          scratch.errors = [];
          const onError = (e: unknown) => (scratch.errors as string[]).push(String(e));
          lib.liveQuery(() => db.subscriptions.get(guid)).subscribe({ next: (row) => void rows.push(row ?? null), error: onError });
          lib.liveQuery(() => db.subscriptions.count()).subscribe({ next: (n) => void counts.push(n), error: onError });
        },
        { dbName, guid: target.guid },
      );
      const rows = () => page.evaluate(() => window.opa.scratch.rows as (Row | null)[]);
      await waitFor('the initial (empty) result', async () => (await rows()).length > 0);

      await page.evaluate(() => window.opa.client.sync());
      await waitFor('the pulled row', async () => (await rows()).at(-1)?.isSubscribed === true);
      await waitFor('the pulled count', () => page.evaluate((n) => (window.opa.scratch.counts as number[]).includes(n), h.server.state().length));

      // A local edit: the worker writes the view and the queue entry; the page sees the pending view (the
      // server holds its answer meanwhile, so that state lasts long enough to be observed)...
      h.server.setLatency(400);
      await page.evaluate((g) => window.opa.client.update(g, { isSubscribed: false }), target.guid);
      await waitFor('the pending edit', async () => (await rows()).some((r) => r?.isSubscribed === false && r.pending > 0));
      h.server.setLatency(0);
      // ...then the acknowledgement.
      await waitFor('the acknowledged edit', async () => {
        const last = (await rows()).at(-1);
        return last?.isSubscribed === false && last.pending === 0;
      });
      expect(h.server.entry(target.guid)!.is_subscribed).toBe(false);

      // Another device changes the feed address; a pull in the worker brings it to the page's observer.
      h.server.foreign.patch(target.guid, { new_feed_url: 'https://moved.example/feed.xml' });
      await page.evaluate(() => window.opa.client.sync());
      await waitFor('the pulled foreign change', async () => (await rows()).at(-1)?.feedUrl === 'https://moved.example/feed.xml');

      // A local add shows up in the count query.
      const before = h.server.state().length;
      await waitFor('the settled count', () => page.evaluate((n) => (window.opa.scratch.counts as number[]).at(-1) === n, before));
      await page.evaluate(() => window.opa.client.add('https://brand-new.example/podcast.rss'));
      await waitFor('the added row counted', () => page.evaluate((n) => (window.opa.scratch.counts as number[]).at(-1) === n, before + 1));

      expect(await page.evaluate(() => window.opa.scratch.errors)).toEqual([]);
      expect(await pageErrors(page)).toEqual([]);
      await context.close();
    });
  });
});
