// Found by the gPodder chaos soak (seed 63): a feed this device unsubscribed is left out of a full listing (read
// after the server's clock went back), which tombstones its row, while this device's subscribe of it again is
// queued. The subscribe goes and the server takes it: the server's word after the tombstone is "subscribed", so
// the row is live again. Kept removed, the feed was shown gone while the server had it, and a later remove()
// never reached the server.
import { afterEach, describe, expect, it } from 'vitest';
import { createSyncEngine } from '../../worker/index.ts';
import { startGpodderServer } from '../server/gpodder/server.ts';
import { wallTime } from '../server/listen.ts';
import { spyFetch, uniqueDb, until } from './helpers.ts';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close().catch(() => undefined);
});

describe('gPodder: a subscribe acknowledged after a pull tombstoned its feed', () => {
  it('ends the tombstone: the feed is live here as on the server, and a later remove reaches the server', async () => {
    const clock = { now: 1_700_000_000_000 };
    const s = await startGpodderServer({ port: 0, dialect: 'mygpo', ahead: 'hidden', time: { ...wallTime, now: () => (clock.now += 1000) } });
    open.push(s);
    s.registerDevice('web-player');
    const feed = 'https://feeds.example/resubscribed.xml';
    /** The first upload subscribing the feed again fails: it waits for the next sync, after that sync's pull. */
    let refuse = false;
    const fetch = spyFetch(async (url, init, real) => {
      if (refuse && init?.method === 'POST' && String(init.body).includes(`"add":["${feed}"]`)) {
        refuse = false;
        return new Response('', { status: 503 });
      }
      return real(url, init);
    });
    const e = createSyncEngine({
      protocol: 'gpodder',
      baseUrl: s.url,
      auth: { type: 'basic', username: 'alice', password: 'alice-password' },
      device: 'web-player',
      dbName: uniqueDb('resubscribe-tombstone'),
      pullInterval: 0,
      pushDelay: 0,
      timeout: 2000,
      retry: { baseDelay: 60_000, maxDelay: 60_000 },
      fetch,
    });
    open.push(e);
    s.foreign.add([feed]);
    await e.sync();
    await e.update(feed, { isSubscribed: false });
    await e.sync();
    // The server's clock goes back: the next pull reads its full listing, which leaves the unsubscribed feed out.
    clock.now -= 300_000;
    refuse = true;
    await e.update(feed, { isSubscribed: true });
    await until(async () => (await e.pending())[0]?.attempts === 1, 5000, 'the refused upload');
    await e.sync();
    expect(s.subscribed({ device: 'web-player' })).toContain(feed);
    const row = (await e.subscriptions({ includeDeleted: true })).find((x) => x.guid === feed);
    expect(row).toMatchObject({ isSubscribed: true });
    expect(row?.deleted).toBeUndefined();
    await e.remove(feed);
    await e.sync();
    expect(s.subscribed({ device: 'web-player' })).not.toContain(feed);
  });
});
