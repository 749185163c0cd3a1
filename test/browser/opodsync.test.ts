// The real client, in every engine, against the real opodsync behind one origin: opodsync sends no CORS
// headers, so a web player serves itself and the server under one origin (here Vite's proxy), as real
// deployments do. Another device's changes go in with plain HTTP from Node.
import { expect, it } from 'vitest';
import { startOpodsync, type Opodsync } from '../support/opodsync.ts';
import { describeOpodsync } from '../support/opodsync-suite.ts';
import { forEachEngine, openPage, perBlock, ready, startPages, uniqueDbName, waitFor } from './support/harness.ts';
import { launchBrowser, type Browser } from '../support/browsers.ts';

const feed = (n: number | string) => `https://feeds.example/browser/show-${n}.xml`;

describeOpodsync('the client against the real opodsync behind a same-origin proxy', () => {
  forEachEngine((engine) => {
    const env = perBlock(
      async () => {
        const server = await startOpodsync();
        const pages = await startPages({ '/api/2': server.baseUrl, '/index.php': server.baseUrl });
        const browser: Browser = await launchBrowser(engine);
        return { server, pages, browser };
      },
      async ({ server, pages, browser }) => {
        await browser.close();
        await pages.close();
        await server.stop();
      },
    );

    /** Another device (a phone) uploading, and the server's list, with plain HTTP. */
    async function call(server: Opodsync, method: 'GET' | 'POST', body?: unknown): Promise<{ add: string[] }> {
      const auth = `Basic ${Buffer.from(`${server.username}:${server.password}`).toString('base64')}`;
      const response = await fetch(`${server.baseUrl}/api/2/subscriptions/${server.username}/phone.json${method === 'GET' ? '?since=0' : ''}`, {
        method,
        headers: { Authorization: auth, 'Content-Type': 'application/json' },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      expect(response.status).toBe(200);
      return (await response.json()) as { add: string[] };
    }

    it('syncs both ways over gPodder v2: another device\'s feeds come down, local changes go up', async () => {
      const { server, pages, browser } = env();
      await call(server, 'POST', { add: [feed(1), feed(2), feed(3)], remove: [] });
      const context = await browser.newContext();
      const origin = new URL(pages.url).origin;
      const page = await openPage(context, pages.url, {
        protocol: 'gpodder',
        baseUrl: origin,
        auth: { type: 'basic', username: server.username, password: server.password },
        device: `browser-${engine}`,
        dbName: uniqueDbName(`opodsync-${engine}`),
        pullInterval: 0,
        pushDelay: 0,
      });
      const first = await page.evaluate(async () => {
        await window.opa.client.sync();
        return (await window.opa.client.subscriptions()).map((s) => s.guid).sort();
      });
      expect(first).toEqual(expect.arrayContaining([feed(1), feed(2), feed(3)]));
      const report = await page.evaluate(
        async ([added, dropped]) => {
          await window.opa.client.add(added);
          await window.opa.client.update(dropped, { isSubscribed: false });
          return window.opa.client.sync();
        },
        [feed(4), feed(1)] as const,
      );
      expect(report).toMatchObject({ failed: 0, pending: 0 });
      const now = new Set((await call(server, 'GET')).add);
      expect(now.has(feed(4))).toBe(true);
      expect(now.has(feed(1))).toBe(false);
      await context.close();
    });

    it('listening state: progress in one tab shows in another, survives a reload, and reaches the server', async () => {
      const { server, pages, browser } = env();
      await call(server, 'POST', { add: [feed('listen')], remove: [] });
      const context = await browser.newContext();
      const options = {
        protocol: 'gpodder' as const,
        baseUrl: new URL(pages.url).origin,
        auth: { type: 'basic' as const, username: server.username, password: server.password },
        device: `browser-${engine}-listen`,
        dbName: uniqueDbName(`opodsync-listen-${engine}`),
        pullInterval: 0,
        pushDelay: 0,
      };
      const player = await openPage(context, pages.url, options);
      const other = await openPage(context, pages.url, options);
      // The page is ready before its worker has started; an answered call says the other tab's engine is up and
      // listening on the tabs' channel (a change posted before that reaches nobody there: its first read sees it).
      await other.evaluate(() => window.opa.client.status());
      const ref = { podcast: feed('listen'), episode: 'https://media.example/browser/listen-1.mp3', guid: 'listen-1' };
      await player.evaluate(() => window.opa.client.sync());
      const state = await player.evaluate((r) => window.opa.client.setProgress(r, { position: 421, total: 1800 }), ref);
      expect(state).toMatchObject({ position: 421, total: 1800, played: false });
      // The other tab hears of it (its worker, over the channel) and reads it from the shared database.
      await waitFor('the other tab to hear of the episode', () =>
        other.evaluate(() => window.opa.events.change.some((e) => (e.episodes ?? []).some((x) => x.guid === 'listen-1'))),
      );
      expect(await other.evaluate((r) => window.opa.client.episode(r), ref)).toMatchObject({ position: 421 });
      await other.reload();
      await ready(other);
      expect(await other.evaluate((r) => window.opa.client.episode(r), ref)).toMatchObject({ position: 421, total: 1800 });
      await player.evaluate(() => window.opa.client.sync());
      const auth = `Basic ${Buffer.from(`${server.username}:${server.password}`).toString('base64')}`;
      const actions = await waitFor('the action on the server', async () => {
        const response = await fetch(`${server.baseUrl}/api/2/episodes/${server.username}.json?since=0`, { headers: { Authorization: auth } });
        const body = (await response.json()) as { actions: { guid?: string; position?: number }[] };
        const mine = body.actions.filter((a) => a.guid === 'listen-1');
        return mine.length ? mine : undefined;
      });
      // The other tab's reload sent what waited as the page went away (last chance), and the push sent it again:
      // opodsync keeps a repeat as a row of its own with equal values, harmless (docs/leaving.md).
      expect(actions.length).toBeLessThanOrEqual(2);
      expect(new Set(actions.map((a) => a.position))).toEqual(new Set([421]));
      await context.close();
    });
  });
});
