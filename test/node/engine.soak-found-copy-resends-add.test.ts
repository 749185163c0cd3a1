// Found by the chaos soak's lost-answer family with the page going away right after (issue 31): an add whose
// upload the server handled and whose answer was lost may have arrived, and is not harmless to repeat: the push
// waits for the server's word before it goes again, and so must the page's last copy. Here the copy still holds
// it: sent as the page goes away, it re-subscribes the feed another device removed meanwhile.
import { afterEach, describe, expect, it } from 'vitest';
import type { LastChanceRequest } from '../../src/protocol.ts';
import { createSyncEngine } from '../../worker/index.ts';
import { startGpodderServer } from '../server/gpodder/server.ts';
import type { GpodderServer } from '../server/gpodder/types.ts';
import { wallTime } from '../server/listen.ts';
import { spyFetch, uniqueDb, until } from './helpers.ts';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close().catch(() => undefined);
});

describe('gPodder (opodsync): an add whose answer was lost, another device removes the feed, the page goes away', () => {
  it("the copy sent at close does not re-subscribe it: the other device's remove stands", async () => {
    let now = 1_700_000_000_000;
    const s: GpodderServer = await startGpodderServer({ port: 0, dialect: 'opodsync', time: { ...wallTime, now: () => (now += 1000) } });
    open.push(s);
    const feed = 'https://feeds.example/lost-then-removed.xml';
    let lost = false;
    const fetch = spyFetch(async (url, init, real) => {
      const response = await real(url, init);
      if (!lost && init?.method === 'POST' && String(init.body).includes(feed)) {
        lost = true;
        s.foreign.remove([feed]);
        throw new TypeError('fetch failed');
      }
      return response;
    });
    const options = {
      protocol: 'gpodder' as const,
      baseUrl: s.url,
      auth: { type: 'basic' as const, username: 'alice', password: 'alice-password' },
      device: 'web-player',
      dbName: uniqueDb('copy-resends'),
      pullInterval: 0,
      pushDelay: 0,
      timeout: 2000,
      retry: { baseDelay: 60_000, maxDelay: 60_000 },
      fetch,
    };
    const e = createSyncEngine(options);
    open.push(e);
    let copy: LastChanceRequest[] = [];
    e.onLastChance((c) => void (copy = c));
    await e.sync();
    await e.add(feed);
    await until(async () => (await e.pending())[0]?.attempts === 1, 5000, 'the lost answer');
    // The copy told after the failure is settled (it is rebuilt once the queue says so: a page gone in the
    // milliseconds between holds the one from before, with the add in flight).
    await until(() => !copy.some((r) => r.body?.includes(feed)), 3000, 'the copy without the add');
    expect(s.subscribed({})).not.toContain(feed);
    // The page goes away before the retry's pull: it sends the copy it holds, and the worker dies with it.
    const basic = `Basic ${Buffer.from('alice:alice-password').toString('base64')}`;
    for (const r of copy) await globalThis.fetch(new URL(r.path, s.url.replace(/\/*$/, '/')), { method: r.method, headers: { ...r.headers, Authorization: basic }, body: r.body });
    await e.close();
    expect(s.subscribed({})).not.toContain(feed);
  });
});
