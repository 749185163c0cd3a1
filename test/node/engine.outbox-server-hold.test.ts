// Backoff belongs to the server, not to each change (issue 31, item 3): while a failed request's backoff runs, new
// edits join the queue and wait; one request carries them when it ends or when a pull answers. A server's
// Retry-After holds everything, a pull's answer included. Counted in requests, never in time.
import { describe, expect, it } from 'vitest';
import type { SyncEngine } from '../../worker/index.ts';
import type { RefServer } from '../server/types.ts';
import type { GpodderServer } from '../server/gpodder/types.ts';
import { episodeEngine, gpodderServer } from './episode-helpers.ts';
import { engine, server, spyFetch, until } from './helpers.ts';

/** A backoff far longer than the test: every request after the first would be one an edit started. */
const LONG = { baseDelay: 60_000, maxDelay: 60_000 };
const EDITS = 40;
const feed = (n: number | string) => `https://feeds.example/held-${n}.xml`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Death = 'refused' | '503';

/** A fetch that plays a dead server once `dead` is set: connections refused, or every request answered 503. */
function deadSwitch(origin: string, death: Death) {
  const net = { dead: false, sent: [] as string[] };
  const fetchImpl = spyFetch(async (url, init, real) => {
    if (!net.dead) return real(url, init);
    net.sent.push(`${init?.method ?? 'GET'} ${url.pathname}`);
    if (death === '503') return new Response('down', { status: 503 });
    return real(String(url).replace(origin, 'http://127.0.0.1:9'), init);
  });
  return Object.assign(net, { fetch: fetchImpl });
}

/** `EDITS` adds over about half a second, as an app's edits come. */
async function addSpread(e: SyncEngine, tag: string): Promise<void> {
  for (let i = 0; i < EDITS; i++) {
    await e.add(feed(`${tag}-${i}`));
    await sleep(12);
  }
  // Whatever push the last edits started has run.
  await e.sync().catch(() => undefined);
}

describe.each(['refused', '503'] as Death[])('a dead server (%s) holds the push, not each change', (death) => {
  it(`OPA: ${EDITS} adds spread over half a second make at most 2 POSTs; a pull that answers sends them all in one`, async () => {
    const s: RefServer = await server();
    const net = deadSwitch(new URL(s.url).origin, death);
    const e = engine(s, { retry: LONG, fetch: net.fetch });
    await e.sync();
    net.dead = true;
    await addSpread(e, `opa-${death}`);
    const posts = net.sent.filter((r) => r.startsWith('POST'));
    expect(posts.length).toBeGreaterThanOrEqual(1);
    expect(posts.length).toBeLessThanOrEqual(2);
    expect(await e.pending()).toHaveLength(EDITS);
    net.dead = false;
    s.clearLog();
    await e.sync();
    await until(async () => (await e.pending()).length === 0, 5000, 'the queue to empty');
    expect(s.log().filter((r) => r.method === 'POST')).toHaveLength(1);
    expect(s.state()).toHaveLength(EDITS);
  });

  it(`gPodder: ${EDITS} adds spread over half a second make at most 2 uploads; a pull that answers sends them all in one`, async () => {
    const s: GpodderServer = await gpodderServer('mygpo');
    s.registerDevice('web-player');
    const net = deadSwitch(new URL(s.url).origin, death);
    const e = episodeEngine(s, 'gpodder', `hold-${death}`, { retry: LONG, fetch: net.fetch });
    await e.sync();
    net.dead = true;
    await addSpread(e, `gp-${death}`);
    const uploads = net.sent.filter((r) => r.startsWith('POST') && r.includes('/subscriptions/'));
    expect(uploads.length).toBeGreaterThanOrEqual(1);
    expect(uploads.length).toBeLessThanOrEqual(2);
    expect(await e.pending()).toHaveLength(EDITS);
    net.dead = false;
    s.clearLog();
    await e.sync();
    await until(async () => (await e.pending()).length === 0, 5000, 'the queue to empty');
    expect(s.log().filter((r) => r.method === 'POST' && r.path.includes('/subscriptions/'))).toHaveLength(1);
    expect(s.subscribed({ device: 'web-player' })).toHaveLength(EDITS);
  });
});

describe("the server's Retry-After holds everything", () => {
  it('OPA: edits after a 503 with Retry-After wait for it, even when a pull answers meanwhile', async () => {
    const s = await server({ seed: 2 });
    const e = engine(s, { retry: { baseDelay: 10, maxDelay: 20 } });
    await e.sync();
    s.failNext(1, 503, { method: 'POST' }, { retryAfter: 3600 });
    await e.add(feed('ra-0'));
    await until(async () => (await e.pending())[0]?.attempts === 1, 5000, 'the refused POST');
    s.clearLog();
    await e.add(feed('ra-1'));
    await e.update(s.state()[0]!.guid, { isSubscribed: !s.state()[0]!.is_subscribed });
    await e.sync();
    await sleep(100);
    await e.sync();
    expect(s.log().filter((r) => r.method !== 'GET')).toEqual([]);
    expect(await e.pending()).toHaveLength(3);
  });
});
