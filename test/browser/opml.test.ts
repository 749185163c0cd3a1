// OPML on the page (issue 33): the fixtures players export import to the expected sets with each browser's own
// DOMParser, in one change event; bad input is refused with nothing queued; export then import into a second
// store gives the same set of feeds. Every page here is offline: nothing reaches the server, so each store holds
// only what its own import added.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { clientOptions, forEachEngine, goOffline, harnessPerFile, openPage, pageErrors, uniqueDbName, waitFor, type BrowserContext } from './support/harness.ts';

const fixture = (name: string) => readFileSync(new URL(`../support/fixtures/opml/${name}`, import.meta.url), 'utf8');

/** What each fixture adds (test/node/opml.test.ts reads the same files with xmldom). */
const EXPECTED: Record<string, { added: string[]; skipped: number }> = {
  'antennapod.opml': { added: ['https://feeds.example.org/radiolab', 'https://podcasts.example.net/feed?id=42&format=rss', 'http://legumes.example.fr/rss.xml'], skipped: 0 },
  'pocketcasts.opml': { added: ['https://feeds.example.org/radiolab', 'https://feeds.example.com/the-daily/rss', 'https://feeds.example.com/hard-fork'], skipped: 0 },
  'apple-bom-crlf.opml': { added: ['https://feeds.example.com/conan', 'https://feeds.example.org/upfirst'], skipped: 0 },
  'gpodder.opml': {
    added: ['https://feeds.example.net/lan', 'https://feeds.example.net/padded.xml', 'https://feeds.example.net/lower', 'https://feeds.example.net/upper', 'https://feeds.example.net/notype'],
    skipped: 0,
  },
  'kasts.opml': { added: ['https://feeds.example.org/astronomycast'], skipped: 6 },
};

forEachEngine((engine) => {
  const h = harnessPerFile(engine, { seed: 0 });

  /** A page whose requests never reach the server: the context offline, and the server cutting every connection. */
  async function offlinePage(context: BrowserContext, label: string) {
    const page = await openPage(context, h.pages.url, clientOptions(h.server, uniqueDbName(label)));
    // The OPML methods' chunk is fetched by the client as it starts, so an import offline works on a page that
    // loaded online and never called one before (an offline boot needs it precached, as every chunk of the app).
    await page.evaluate(() => window.opa.client.status());
    await waitFor('the OPML chunk fetched', () => page.evaluate(() => performance.getEntriesByType('resource').some((e) => e.name.includes('opml-methods'))));
    await goOffline(context, h.server);
    return page;
  }
  afterEach(() => h.server.clearFaults());

  describe('importOpml / exportOpml', () => {
    it("imports the players' exports to the expected sets, in one change event", async () => {
      for (const [name, expected] of Object.entries(EXPECTED)) {
          const context = await h.browser.newContext();
          const page = await offlinePage(context, 'opml-import');
          const seen = await page.evaluate(async (text) => {
            const { client } = window.opa;
            let events = 0;
            const off = client.on('change', () => events++);
            const report = await client.importOpml(text);
            // The worker posts the event before its answer, and a later call's answer after both.
            const rows = await client.subscriptions({ subscribed: true });
            off();
            return { report, events, feeds: rows.map((r) => r.feedUrl), pending: (await client.pending()).map((c) => c.kind) };
          }, fixture(name));
          expect(seen.report.added, name).toEqual(expected.added);
          expect(seen.report.alreadyThere, name).toEqual([]);
          expect(seen.report.skipped, name).toHaveLength(expected.skipped);
          expect(seen.feeds.sort(), name).toEqual([...expected.added].sort());
          expect(seen.pending, name).toEqual(expected.added.map(() => 'add'));
          expect(seen.events, name).toBe(1);
          expect(await pageErrors(page)).toEqual([]);
          await context.close();
        }
    });

    it('refuses what is not OPML with `invalid`, queueing nothing', async () => {
      const context = await h.browser.newContext();
      const page = await offlinePage(context, 'opml-bad');
      const seen = await page.evaluate(async (truncated) => {
        const { client, lib } = window.opa;
        const codes: (string | undefined)[] = [];
        for (const bad of ['Radiolab https://feeds.example.org/radiolab', '<?xml version="1.0"?><rss version="2.0"><channel/></rss>', truncated, 42]) {
          codes.push(await client.importOpml(bad as string).then(() => 'resolved', (e: unknown) => (lib.isSyncError(e) ? e.code : String(e))));
        }
        return { codes, pending: await client.pending(), rows: await client.subscriptions() };
      }, fixture('antennapod.opml').slice(0, 400));
      expect(seen.codes).toEqual(['invalid', 'invalid', 'invalid', 'invalid']);
      expect(seen.pending).toEqual([]);
      expect(seen.rows).toEqual([]);
      await context.close();
    });

    it('export, then import into a second store: the same subscribed feeds', async () => {
      const feeds = [
        'https://feeds.example.org/a?x=1&y=<2>',
        'https://feeds.example.org/quote"d\'',
        'https://feeds.example.org/caf\u00e9/\u{1F399}',
        'http://feeds.example.org/plain',
      ];
      const context = await h.browser.newContext();
      const first = await offlinePage(context, 'opml-export');
      const text = await first.evaluate(async (urls) => {
        const { client } = window.opa;
        await client.addMany([...urls, 'https://feeds.example.org/dropped']);
        const dropped = (await client.subscriptions()).find((r) => r.feedUrl === 'https://feeds.example.org/dropped')!;
        await client.update(dropped.guid, { isSubscribed: false });
        return client.exportOpml({ title: 'Mine & yours', titles: { [urls[0]!]: 'A <b>&</b> "B"' } });
      }, feeds);
      expect(text).toContain('<title>Mine &amp; yours</title>');
      expect(text).toContain('text="A &lt;b&gt;&amp;&lt;/b&gt; &quot;B&quot;"');
      expect(text).not.toContain('dropped');
      const other = await h.browser.newContext();
      const second = await offlinePage(other, 'opml-export-2');
      const read = await second.evaluate(async (t) => {
        const { client } = window.opa;
        const report = await client.importOpml(t);
        return { report, feeds: (await client.subscriptions({ subscribed: true })).map((r) => r.feedUrl) };
      }, text);
      expect({ ...read.report, added: read.report.added.sort() }).toEqual({ added: [...feeds].sort(), alreadyThere: [], skipped: [] });
      expect(read.feeds.sort()).toEqual([...feeds].sort());
      await context.close();
      await other.close();
    });
  });
});
