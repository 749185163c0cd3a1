// The service worker pushes what waits and pulls only when it must (issue 31 item 5): first when a change waits
// for the server's word (an add that may have arrived), or when a hold a tab left runs on the queue (the pull is
// the probe that ends it). A change never handed out goes straight out, listening state included.
import { beforeEach, describe, expect, it } from 'vitest';
import { serveBackgroundSync, type BackgroundSyncOptions } from '../../worker/sw.ts';
import { episodeEngine, feed, gpodderServer, media } from './episode-helpers.ts';
import { fakeSelf, forgetStores, queuedIn } from './fake-sw.ts';
import { TOKEN, engine, server, until } from './helpers.ts';

const FEED = 'https://feeds.example.com/push-first.xml';
const bearer: BackgroundSyncOptions['auth'] = () => ({ type: 'bearer', token: TOKEN });
const requests = (log: { method: string; path: string }[]) => log.map((r) => `${r.method} ${r.path.replace(/^\/v1/, '')}`);

describe('the service worker pushes first', () => {
  beforeEach(forgetStores);

  it('a change never handed out: its upload is the event’s only request (no pull before it)', async () => {
    const s = await server();
    // The page's push timer never fires: the add is queued, never sent.
    const page = engine(s, { backgroundSync: true, pushDelay: 600_000 });
    await page.sync();
    await page.add(FEED);
    await page.close();
    s.clearLog();
    const self = fakeSelf();
    serveBackgroundSync({ auth: bearer, target: self.target, budget: 10_000 });
    await expect(self.fire()).resolves.toEqual(['sent']);
    expect(requests(s.log())).toEqual(['POST /subscriptions']);
    expect(s.state().filter((e) => e.feed_url === FEED)).toHaveLength(1);
    expect(await queuedIn(page.dbName)).toBe(0);
  });

  it('an add that may have arrived, then changed by another device: it pulls first, and the other device’s word stands', async () => {
    const s = await server();
    // The POST reaches the server, its answer is cut; the page's retry waits a minute, and the page closes.
    s.dropNext(1, { method: 'POST' }, { afterHandling: true });
    const page = engine(s, { backgroundSync: true, retry: { baseDelay: 60_000, maxDelay: 60_000 } });
    await page.add(FEED);
    await page.sync().catch(() => undefined);
    expect((await page.status()).pending).toBe(1);
    await page.close();
    const [entry] = s.state().filter((e) => e.feed_url === FEED);
    s.foreign.patch(entry!.guid, { is_subscribed: false });
    s.clearLog();
    const self = fakeSelf();
    serveBackgroundSync({ auth: bearer, target: self.target, budget: 10_000, baseDelay: 20 });
    await expect(self.fire()).resolves.toEqual(['sent']);
    const sent = requests(s.log());
    expect(sent[0]).toBe('GET /subscriptions');
    expect(sent).not.toContain('POST /subscriptions');
    expect(s.entry(entry!.guid)).toMatchObject({ is_subscribed: false });
    expect(await queuedIn(page.dbName)).toBe(0);
  });

  it('a hold a tab left (a minute of backoff): it pulls first and, answered, sends at once instead of waiting it out', async () => {
    const s = await server({ seed: 1 });
    const page = engine(s, { backgroundSync: true, retry: { baseDelay: 60_000, maxDelay: 60_000 } });
    await page.sync();
    const { guid } = s.state()[0]!;
    // A PATCH (harmless to send twice, so it needs no word from the server) refused by a 503: held for a minute.
    s.failNext(1000, 503);
    await page.update(guid, { isSubscribed: false });
    await until(async () => (await page.pending())[0]?.attempts === 1, 5000, 'the refused PATCH');
    await page.close();
    s.clearFaults();
    s.clearLog();
    const self = fakeSelf();
    // A budget far shorter than the hold: only the probe's answer lets the change go within it.
    serveBackgroundSync({ auth: bearer, target: self.target, budget: 5_000, baseDelay: 20 });
    await expect(self.fire()).resolves.toEqual(['sent']);
    expect(requests(s.log())).toEqual(['GET /subscriptions', `PATCH /subscriptions/${guid}`]);
    expect(s.entry(guid)).toMatchObject({ is_subscribed: false });
  });

  it('gPodder: a listening position not yet due goes at once, with no pull before it', async () => {
    const s = await gpodderServer('mygpo');
    s.registerDevice('web-player');
    s.foreign.add([feed(0)], { device: 'web-player' });
    const page = episodeEngine(s, 'gpodder', 'sw-push-first', { backgroundSync: true, progressInterval: 600_000, pushDelay: 600_000 });
    await page.sync();
    await page.setProgress({ podcast: feed(0), episode: media(1), guid: 'g1' }, { position: 42, total: 100 });
    await page.close();
    s.clearLog();
    const self = fakeSelf();
    serveBackgroundSync({ auth: () => ({ type: 'basic', username: 'alice', password: 'alice-password' }), target: self.target, budget: 10_000 });
    await expect(self.fire()).resolves.toEqual(['sent']);
    // The device's registration (once per engine: each event's is new), then the upload; nothing read.
    expect(s.log().map((r) => `${r.method} ${r.path}`)).toEqual(['POST /api/2/devices/alice/web-player.json', 'POST /api/2/episodes/alice.json']);
    expect(s.episodeLog().filter((a) => a.device === 'web-player').at(-1)).toMatchObject({ position: 42 });
  });
});
