// A worker may end at any moment (a reload, a closed tab, terminate()), with the engine busy. The next client on
// the same database must still be answered: WebKit leaves a database unable to run any transaction, for
// every context, when a worker ends with two IndexedDB transactions in flight (see worker/store/core.ts).
import { describe, expect, it } from 'vitest';
import { clientOptions, forEachEngine, harnessPerFile, openPage, uniqueDbName } from './support/harness.ts';

const ROUNDS = 12;

forEachEngine((engine) => {
  const h = harnessPerFile(engine, { seed: 40 });

  describe('a worker ended while busy', () => {
    it('leaves the database usable: the next client on it is answered, round after round', async () => {
      const context = await h.browser.newContext();
      const page = await openPage(context, h.pages.url, clientOptions(h.server, uniqueDbName('ending')));
      await page.evaluate(() => window.opa.client.sync());

      const outcome = await page.evaluate(async (rounds) => {
        const { lib, options } = window.opa;
        let client = window.opa.client;
        const quiet = (p: Promise<unknown>) => void p.catch(() => undefined);
        for (let round = 0; round < rounds; round++) {
          const guids = (await client.subscriptions()).map((s) => s.guid).slice(0, 6);
          // Calls that each take a transaction of their own, all at once, as an app's UI may make them.
          for (const [i, guid] of guids.entries()) {
            quiet(client.update(guid, { isSubscribed: (round + i) % 2 === 0 }));
            quiet(client.status());
            quiet(client.subscriptions());
            quiet(client.pending());
          }
          // End it part-way through, at a different point each round.
          await new Promise((resolve) => setTimeout(resolve, (round * 7) % 40));
          client.worker.terminate();
          client = lib.createSyncClient(options);
          const answered = await Promise.race([
            client.pending().then(() => true),
            new Promise<false>((resolve) => setTimeout(() => resolve(false), 8000)),
          ]);
          if (!answered) return { stalledAt: round };
        }
        const guid = (await client.subscriptions())[0]!.guid;
        const view = await client.update(guid, { isSubscribed: false });
        await client.close();
        return { view };
      }, ROUNDS);

      expect(outcome).toMatchObject({ view: { isSubscribed: false, pending: true } });
      await context.close();
    });
  });
});
