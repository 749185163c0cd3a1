// Adds in bulk on the wire (issue 33): on the Open Podcast API, queued adds share `POST /subscriptions` (its body
// takes a list), 100 at a time; each settles by its own entry of the answer; a 413 splits the request; every other
// change keeps a request of its own.
import { describe, expect, it } from 'vitest';
import { engine, requests, server, settle, spyFetch } from './helpers.ts';

const feeds = (n: number, tag = 'bulk') => Array.from({ length: n }, (_, i) => `https://${tag}.example/feed/${i}`);
const posted = (init: RequestInit | undefined) => (JSON.parse(String(init?.body)) as { subscriptions: { feed_url: string }[] }).subscriptions;

describe('adds in bulk (OPA)', () => {
  it('1,000 feeds added offline reach the server in at most 20 POSTs on reconnect; updates still go one each', async () => {
    const s = await server({ seed: 2 });
    const e = engine(s);
    await e.sync();
    const [a, b] = await e.subscriptions({ subscribed: true });
    e.setOnline(false);
    const urls = feeds(1000);
    expect((await e.addMany(urls)).added).toHaveLength(1000);
    await e.update(a!.guid, { isSubscribed: false });
    await e.update(b!.guid, { isSubscribed: false });
    s.clearLog();
    e.setOnline(true);
    await settle(e, 30_000);
    const posts = requests(s, 'POST', '/subscriptions');
    expect(posts.length).toBeLessThanOrEqual(20);
    expect(posts.length).toBe(10);
    expect(requests(s, 'PATCH')).toHaveLength(2);
    expect(await e.pending()).toEqual([]);
    expect(await e.failed()).toEqual([]);
    const onServer = new Set(s.state().filter((x) => x.is_subscribed).map((x) => x.feed_url));
    expect(urls.every((u) => onServer.has(u))).toBe(true);
    expect(onServer.has(a!.feedUrl)).toBe(false);
    await e.close();
  }, 60_000);

  it('a 413 splits the request in halves until the server takes them, and nothing is lost', async () => {
    const s = await server({ seed: 0 });
    const sizes: number[] = [];
    const e = engine(s, {
      fetch: spyFetch(async (url, init, real) => {
        if (init?.method !== 'POST') return real(url, init);
        const n = posted(init).length;
        sizes.push(n);
        return n > 30 ? new Response('Payload Too Large', { status: 413 }) : real(url, init);
      }),
    });
    e.setOnline(false);
    const urls = feeds(100);
    await e.addMany(urls);
    e.setOnline(true);
    await settle(e);
    expect(sizes).toEqual([100, 50, 25, 25, 50, 25, 25]);
    expect(await e.failed()).toEqual([]);
    expect(await e.pending()).toEqual([]);
    expect(new Set(s.state().map((x) => x.feed_url))).toEqual(new Set(urls));
    await e.close();
  });

  it("one feed the server refuses lands in failed() with the server's words; the others in its request are acknowledged", async () => {
    const s = await server({ seed: 0 });
    const blocked = 'https://blocked.example/feed.xml';
    const e = engine(s, {
      fetch: spyFetch(async (url, init, real) => {
        if (init?.method !== 'POST' || !String(init.body).includes(blocked)) return real(url, init);
        // The server adds the others and refuses this one inside its 200, as POST /subscriptions reports it.
        const rest = posted(init).filter((x) => x.feed_url !== blocked);
        const answer = (await (await real(url, { ...init, body: JSON.stringify({ subscriptions: rest }) })).json()) as { success: unknown[]; failure: unknown[] };
        answer.failure.push({ feed_url: blocked, message: 'Feed is blocked on this server' });
        return new Response(JSON.stringify(answer), { status: 200, headers: { 'content-type': 'application/json' } });
      }),
    });
    e.setOnline(false);
    const urls = feeds(5);
    await e.addMany([...urls.slice(0, 2), blocked, ...urls.slice(2)]);
    s.clearLog();
    e.setOnline(true);
    await settle(e);
    expect(requests(s, 'POST')).toHaveLength(1);
    const failed = await e.failed();
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ kind: 'add', feedUrl: blocked, reason: { code: 'invalid', message: expect.stringContaining('Feed is blocked on this server') } });
    expect(await e.pending()).toEqual([]);
    expect(new Set(s.state().map((x) => x.feed_url))).toEqual(new Set(urls));
    await e.close();
  });
});
