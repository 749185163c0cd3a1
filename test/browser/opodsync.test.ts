// The real client, in every engine, against the real opodsync behind one origin: opodsync sends no CORS
// headers, so a web player serves itself and the server under one origin (here Vite's proxy), as real
// deployments do. Another device's changes go in with plain HTTP from Node.
import { expect, it } from 'vitest';
import { startOpodsync, type Opodsync } from '../support/opodsync.ts';
import { describeOpodsync } from '../support/opodsync-suite.ts';
import { forEachEngine, openPage, perBlock, startPages, uniqueDbName } from './support/harness.ts';
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
  });
});
