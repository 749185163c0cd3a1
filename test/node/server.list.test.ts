import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createApi } from '../server/client.ts';
import { serverPerFile } from './server-fixture.ts';
import { startServer, type WireSubscriptionPage } from '../server/server.ts';

const ctx = serverPerFile({ maxPerPage: 100 });

const list = (query = '') => ctx.api<WireSubscriptionPage>('GET', `/subscriptions${query}`);
const since = (iso: string) => `?since=${encodeURIComponent(iso)}`;
const shift = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString();

describe('GET /subscriptions without since', () => {
  it('returns every current entry, unsubscribed ones included, deleted ones left out', async () => {
    const a = ctx.server.foreign.add('https://a.example/feed.xml');
    const b = ctx.server.foreign.add('https://b.example/feed.xml');
    const c = ctx.server.foreign.add('https://c.example/feed.xml');
    ctx.server.foreign.patch(b.guid, { is_subscribed: false });
    ctx.server.foreign.remove(c.guid);
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(2);
    expect(res.body.subscriptions.map((s) => [s.guid, s.is_subscribed])).toEqual([
      [a.guid, true],
      [b.guid, false],
    ]);
  });

  it('reports fields only when set: no deleted, no guid fields on a plain entry', async () => {
    const a = ctx.server.foreign.add('https://a.example/feed.xml');
    const [entry] = (await list()).body.subscriptions;
    expect(Object.keys(entry).sort()).toEqual(['feed_url', 'guid', 'is_subscribed', 'subscription_changed']);
    expect(entry).toEqual({ feed_url: a.feed_url, guid: a.guid, is_subscribed: true, subscription_changed: a.subscription_changed });
  });

  it('keeps insertion order, even after an upsert touches an older entry', async () => {
    const seeded = ctx.server.seed(5);
    ctx.server.foreign.add(seeded[0].feed_url); // no-op upsert
    ctx.server.foreign.patch(seeded[1].guid, { is_subscribed: !seeded[1].is_subscribed });
    const guids = (await list()).body.subscriptions.map((s) => s.guid);
    expect(guids).toEqual(seeded.map((s) => s.guid));
  });
});

describe('GET /subscriptions?since', () => {
  it('is strictly greater: an entry stamped exactly at since is left out, one ms earlier it is in', async () => {
    ctx.server.foreign.add('https://a.example/feed.xml');
    const b = ctx.server.foreign.add('https://b.example/feed.xml');
    const c = ctx.server.foreign.add('https://c.example/feed.xml');
    const t = b.subscription_changed!;
    const at = await list(since(t));
    expect(at.body.subscriptions.map((s) => s.guid)).toEqual([c.guid]);
    expect(at.body.total).toBe(1);
    const before = await list(since(shift(t, -1)));
    expect(before.body.subscriptions.map((s) => s.guid)).toEqual([b.guid, c.guid]);
  });

  it('reads offsets and sub-millisecond digits exactly', async () => {
    const b = ctx.server.foreign.add('https://b.example/feed.xml');
    const t = Date.parse(b.subscription_changed!);
    const offset = new Date(t + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    expect((await list(since(offset))).body.total).toBe(0);
    const justBefore = new Date(t - 1).toISOString().replace(/Z$/, '999Z');
    expect((await list(since(justBefore))).body.total).toBe(1);
  });

  it('lists tombstones with deleted and unsubscribed entries with their new flag', async () => {
    const a = ctx.server.foreign.add('https://a.example/feed.xml');
    const b = ctx.server.foreign.add('https://b.example/feed.xml');
    const cursor = b.subscription_changed!;
    ctx.server.foreign.patch(a.guid, { is_subscribed: false });
    const gone = ctx.server.foreign.remove(b.guid);
    const res = await list(since(cursor));
    expect(res.body.subscriptions).toEqual([
      { feed_url: a.feed_url, guid: a.guid, is_subscribed: false, subscription_changed: ctx.server.entry(a.guid)!.subscription_changed },
      { feed_url: b.feed_url, guid: b.guid, is_subscribed: false, subscription_changed: gone.deleted, deleted: gone.deleted },
    ]);
  });

  it('matches on guid_changed alone', async () => {
    const a = ctx.server.foreign.add('https://a.example/feed.xml');
    const cursor = ctx.server.foreign.add('https://b.example/feed.xml').subscription_changed!;
    const patch = ctx.server.foreign.patch(a.guid, { new_guid: 'renamed' });
    const res = await list(since(cursor));
    expect(res.body.subscriptions).toEqual([
      {
        feed_url: a.feed_url,
        guid: a.guid,
        is_subscribed: true,
        subscription_changed: a.subscription_changed,
        new_guid: 'renamed',
        guid_changed: patch.guid_changed,
      },
    ]);
  });

  it('refuses what is not an RFC 3339 date-time with 405', async () => {
    for (const bad of ['yesterday', '0', '2022-05-30', '2022-05-30T00:00:00', '2022-02-30T00:00:00Z', '2022-05-30T24:00:00Z', '']) {
      const res = await list(since(bad));
      expect(res.status, bad).toBe(405);
      expect(res.body).toEqual({ code: 405, message: 'Input could not be validated' });
    }
  });
});

describe('paging', () => {
  it('defaults to page 1 of 50 with an absolute next link and no previous', async () => {
    ctx.server.seed(120);
    const res = await list();
    expect(res.body.page).toBe(1);
    expect(res.body.per_page).toBe(50);
    expect(res.body.total).toBe(120);
    expect(res.body.subscriptions).toHaveLength(50);
    expect(res.body.next).toBe(`${ctx.server.url}/subscriptions?page=2&per_page=50`);
    expect(res.body.previous).toBeUndefined();
  });

  it('walks next links to the end, visiting every entry once in order', async () => {
    const seeded = ctx.server.seed(120);
    const seen: string[] = [];
    let url: string | undefined = `${ctx.server.url}/subscriptions?per_page=50`;
    const pages: WireSubscriptionPage[] = [];
    while (url) {
      const res = await fetch(url, { headers: { Authorization: 'Bearer demo-token' } });
      const page = (await res.json()) as WireSubscriptionPage;
      pages.push(page);
      seen.push(...page.subscriptions.map((s) => s.guid));
      url = page.next;
    }
    expect(pages.map((p) => p.subscriptions.length)).toEqual([50, 50, 20]);
    expect(pages[2].previous).toBe(`${ctx.server.url}/subscriptions?page=2&per_page=50`);
    expect(seen).toEqual(seeded.map((s) => s.guid));
  });

  it('caps per_page at the ctx.server maximum and says so', async () => {
    ctx.server.seed(150);
    const res = await list('?per_page=1000');
    expect(res.body.per_page).toBe(100);
    expect(res.body.subscriptions).toHaveLength(100);
    expect(res.body.next).toBe(`${ctx.server.url}/subscriptions?page=2&per_page=100`);
  });

  it('keeps since and per_page in the links', async () => {
    const first = ctx.server.seed(7)[0];
    const cursor = shift(first.subscription_changed!, -1);
    const res = await list(`?page=2&per_page=2${since(cursor).replace('?', '&')}`);
    const next = new URL(res.body.next!);
    const previous = new URL(res.body.previous!);
    expect(Object.fromEntries(next.searchParams)).toEqual({ page: '3', per_page: '2', since: cursor });
    expect(Object.fromEntries(previous.searchParams)).toEqual({ page: '1', per_page: '2', since: cursor });
  });

  it('answers a page past the end with no entries, the total, and a previous link', async () => {
    ctx.server.seed(3);
    const res = await list('?page=4&per_page=2');
    expect(res.body).toEqual({
      total: 3,
      page: 4,
      per_page: 2,
      previous: `${ctx.server.url}/subscriptions?page=3&per_page=2`,
      subscriptions: [],
    });
  });

  it('refuses page and per_page values that are not integers >= 1 with 405', async () => {
    for (const q of ['page=0', 'page=-1', 'page=1.5', 'page=abc', 'page=', 'per_page=0', 'per_page=x', 'per_page=2e3']) {
      const res = await list(`?${q}`);
      expect(res.status, q).toBe(405);
      expect(res.body).toEqual({ code: 405, message: 'Input could not be validated' });
    }
  });
});

describe('link styles', () => {
  it('emits relative links when configured', async () => {
    const rel = await startServer({ port: 0, links: 'relative' });
    try {
      rel.seed(5);
      const cursor = '2000-01-01T00:00:00.000Z';
      const res = await createApi(rel.url)<WireSubscriptionPage>('GET', `/subscriptions?page=2&per_page=2&since=${encodeURIComponent(cursor)}`);
      expect(res.body.next).toBe(`/v1/subscriptions?page=3&per_page=2&since=${encodeURIComponent(cursor)}`);
      expect(res.body.previous).toBe(`/v1/subscriptions?page=1&per_page=2&since=${encodeURIComponent(cursor)}`);
    } finally {
      await rel.close();
    }
  });

  it('leaves links out when configured', async () => {
    const none = await startServer({ port: 0, links: 'none' });
    try {
      none.seed(5);
      const res = await createApi(none.url)<WireSubscriptionPage>('GET', '/subscriptions?page=2&per_page=2');
      expect(res.body.subscriptions).toHaveLength(2);
      expect('next' in res.body || 'previous' in res.body).toBe(false);
    } finally {
      await none.close();
    }
  });

  it('builds absolute links from the Host the client used', async () => {
    ctx.server.seed(3);
    const body = await new Promise<string>((resolve, reject) => {
      const req = request(
        `${ctx.server.url}/subscriptions?per_page=1`,
        { headers: { Host: `localhost:${ctx.server.port}`, Authorization: 'Bearer demo-token' } },
        (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () => resolve(text));
        },
      );
      req.on('error', reject);
      req.end();
    });
    const page = JSON.parse(body) as WireSubscriptionPage;
    expect(page.next).toBe(`http://localhost:${ctx.server.port}/v1/subscriptions?page=2&per_page=1`);
  });
});
