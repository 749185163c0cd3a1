import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { engine, picture, requests, server, serverPicture, spyFetch } from './helpers.ts';

describe('pull', () => {
  it('first sync sends no since, stores every entry and a server-time cursor', async () => {
    const s = await server({ seed: 25 });
    const e = engine(s);
    const report = await e.sync();
    const lists = requests(s, 'GET', '/subscriptions');
    expect(lists.length).toBeGreaterThan(0);
    expect(lists[0]!.query.since).toBeUndefined();
    expect(picture(await e.subscriptions())).toEqual(serverPicture(s));
    expect(report.pulled).toBe(25);
    const newest = Math.max(...s.state().map((x) => Date.parse(x.subscription_changed!)));
    const status = await e.status();
    expect(Date.parse(status.cursor!)).toBeLessThanOrEqual(newest);
    expect(Date.parse(status.cursor!)).toBeGreaterThan(newest - 5000);
  });

  it('an incremental pull sends since and costs one request when nothing changed', async () => {
    const s = await server({ seed: 30 });
    const e = engine(s, { pageSize: 50 });
    await e.sync();
    const cursor = (await e.status()).cursor!;
    s.clearLog();
    const report = await e.sync();
    const lists = requests(s, 'GET', '/subscriptions');
    expect(lists).toHaveLength(1);
    expect(Date.parse(lists[0]!.query.since!)).toBeLessThan(Date.parse(cursor));
    expect(report.pulled).toBe(0);
  });

  it('sees a foreign change made after the last pull', async () => {
    const s = await server({ seed: 5 });
    const e = engine(s);
    await e.sync();
    const target = s.state()[2]!;
    s.foreign.patch(target.guid, { is_subscribed: false, new_feed_url: 'https://moved.example/feed.xml' });
    const changes: string[][] = [];
    e.on('change', (c) => changes.push(c.guids));
    await e.sync();
    const local = await e.subscription(target.guid);
    expect(local).toMatchObject({ isSubscribed: false, feedUrl: 'https://moved.example/feed.xml', pending: false });
    expect(changes.flat()).toContain(target.guid);
  });

  for (const links of ['absolute', 'relative', 'none'] as const) {
    it(`drains every page (${links} next links)`, async () => {
      const s = await server({ seed: 30, links });
      const e = engine(s, { pageSize: 7 });
      await e.sync();
      expect(picture(await e.subscriptions())).toEqual(serverPicture(s));
      const pages = requests(s, 'GET', '/subscriptions').map((r) => Number(r.query.page ?? 1));
      expect(new Set(pages)).toEqual(new Set([1, 2, 3, 4, 5]));
    });
  }

  it('never follows a next link to another origin, nor sends credentials there', async () => {
    const seen: http.IncomingHttpHeaders[] = [];
    const other = http.createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"total":0,"page":1,"per_page":7,"subscriptions":[]}');
    });
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    try {
      const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
      const s = await server({ seed: 20 });
      const fetchImpl = spyFetch(async (url, init, real) => {
        const response = await real(url, init);
        if (!url.pathname.endsWith('/subscriptions') || init?.method !== 'GET') return response;
        const body = await response.json();
        body.next = `${otherUrl}/v1/subscriptions?page=${Number(url.searchParams.get('page') ?? 1) + 1}`;
        return new Response(JSON.stringify(body), { status: response.status, headers: response.headers });
      });
      const e = engine(s, { pageSize: 7, fetch: fetchImpl });
      await e.sync();
      expect(seen).toHaveLength(0);
      expect(picture(await e.subscriptions())).toEqual(serverPicture(s));
    } finally {
      await new Promise((r) => other.close(r));
    }
  });

  it('survives unordered offset paging with foreign changes mid-drain: nothing is missed', async () => {
    const s = await server({ seed: 60 });
    const e0 = engine(s, { pageSize: 10 });
    await e0.sync();
    let pages = 0;
    const fetchImpl = spyFetch(async (url, init, real) => {
      if (url.pathname.endsWith('/subscriptions') && (init?.method ?? 'GET') === 'GET') {
        pages++;
        if (pages === 2) {
          // Another device edits, adds and deletes while we page through.
          const st = s.state();
          s.foreign.patch(st[0]!.guid, { is_subscribed: false });
          s.foreign.add('https://mid-drain.example/feed.xml');
          s.foreign.remove(st[40]!.guid);
          s.reorder(2);
        }
      }
      return real(url, init);
    });
    const e = engine(s, { pageSize: 10, fetch: fetchImpl });
    await e.sync();
    await e.sync();
    expect(picture(await e.subscriptions())).toEqual(serverPicture(s));
    // The shuffled pages made the first drain inconsistent: it was drained again.
    expect(pages).toBeGreaterThan(7 + 1);
  });

  it('a pull that dies on a page keeps its cursor; the next pull completes the store', async () => {
    const s = await server({ seed: 40 });
    let calls = 0;
    let broken = true;
    const fetchImpl = spyFetch(async (url, init, real) => {
      if (url.pathname.endsWith('/subscriptions') && broken && ++calls === 3) throw new TypeError('connection reset');
      return real(url, init);
    });
    const e = engine(s, { pageSize: 10, fetch: fetchImpl });
    await expect(e.sync()).rejects.toMatchObject({ code: 'network' });
    const partial = await e.subscriptions();
    expect(partial.length).toBeGreaterThan(0);
    expect(partial.length).toBeLessThan(40);
    expect((await e.status()).cursor).toBeUndefined();
    broken = false;
    await e.sync();
    expect(picture(await e.subscriptions())).toEqual(serverPicture(s));
    expect((await e.status()).cursor).toBeDefined();
  });

  it('refuses an inconsistent drain that never settles (lying total) and keeps the cursor', async () => {
    const s = await server({ seed: 12 });
    const e = engine(s, { pageSize: 5 });
    await e.sync();
    const before = (await e.status()).cursor;
    s.foreign.patch(s.state()[0]!.guid, { is_subscribed: false });
    const lying = spyFetch(async (url, init, real) => {
      const response = await real(url, init);
      if (!url.pathname.endsWith('/subscriptions')) return response;
      const body = await response.json();
      body.total = 99;
      return new Response(JSON.stringify(body), { status: 200 });
    });
    const liar = engine(s, { pageSize: 5, fetch: lying, dbName: e.dbName });
    await e.close();
    await expect(liar.sync()).rejects.toMatchObject({ code: 'bad-response' });
    expect((await liar.status()).cursor).toBe(before);
  });

  it('follows guid chains: rows re-keyed, old guids resolve, queued changes follow', async () => {
    const s = await server({ seed: 3 });
    const e = engine(s);
    await e.sync();
    const [a, b] = s.state();
    s.foreign.patch(a!.guid, { new_guid: 'chain-2' });
    await e.sync();
    expect((await e.subscription(a!.guid))?.guid).toBe('chain-2');
    s.foreign.patch('chain-2', { new_guid: 'chain-3' });
    await e.sync();
    const list = await e.subscriptions();
    expect(list.map((x) => x.guid)).toContain('chain-3');
    expect(list.map((x) => x.guid)).not.toContain(a!.guid);
    expect(list.map((x) => x.guid)).not.toContain('chain-2');
    expect((await e.subscription(a!.guid))?.guid).toBe('chain-3');
    // A change addressed by the oldest guid lands on the newest entry.
    await e.update(a!.guid, { isSubscribed: false });
    await e.sync();
    expect(s.entry('chain-3')?.is_subscribed).toBe(false);
    // Collapse: b now points at the chain's entry; one row remains.
    s.foreign.patch(b!.guid, { new_guid: 'chain-3' });
    await e.sync();
    expect((await e.subscription(b!.guid))?.guid).toBe('chain-3');
    expect(picture(await e.subscriptions())).toEqual(serverPicture(s));
  });

  it('turns deleted entries into tombstones hidden from default reads', async () => {
    const s = await server({ seed: 4 });
    const e = engine(s);
    await e.sync();
    const victim = s.state()[1]!;
    s.foreign.remove(victim.guid);
    await e.sync();
    expect((await e.subscriptions()).map((x) => x.guid)).not.toContain(victim.guid);
    const all = await e.subscriptions({ includeDeleted: true });
    expect(all.find((x) => x.guid === victim.guid)?.deleted).toBe(s.entry(victim.guid)?.deleted);
    expect(await e.subscriptions({ subscribed: true })).toHaveLength(3);
  });

  it('reports pull progress in status events', async () => {
    const s = await server({ seed: 45 });
    const seen: { pages: number; entries: number; total?: number }[] = [];
    // Each page waits until a status event reported the one before (status events are coalesced), so what is
    // seen does not depend on how fast the machine is; a few seconds at most, should no event come.
    const reported = (pages: number) => seen.some((p) => p.pages >= pages);
    const fetchImpl = spyFetch(async (url, init, real) => {
      const page = Number(url.searchParams.get('page') ?? 1);
      for (let waited = 0; page > 1 && !reported(page - 1) && waited < 5000; waited += 10) await new Promise((r) => setTimeout(r, 10));
      return real(url, init);
    });
    const e = engine(s, { pageSize: 10, fetch: fetchImpl });
    e.on('status', (st) => st.progress && seen.push(st.progress));
    await e.sync();
    expect(seen.some((p) => p.total === 45)).toBe(true);
    expect(Math.max(...seen.map((p) => p.pages))).toBeGreaterThanOrEqual(4);
    expect((await e.status()).progress).toBeUndefined();
  });
});

describe('pull against a server that ignores page', () => {
  it('stops with bad-response instead of walking forever', async () => {
    const s = await server({ seed: 12, links: 'none' });
    // Page 1 every time, and `total` filled with the page length (as one real server does): only the
    // repeated content can tell that the walk never ends.
    const stuck = spyFetch(async (url, init, real) => {
      url.searchParams.set('page', '1');
      const body = await (await real(url, init)).json();
      body.total = body.subscriptions.length;
      return new Response(JSON.stringify(body), { status: 200 });
    });
    const e = engine(s, { pageSize: 5, fetch: stuck });
    await expect(e.sync()).rejects.toMatchObject({ code: 'bad-response' });
    expect(requests(s, 'GET', '/subscriptions').length).toBeLessThan(12);
    expect((await e.status()).cursor).toBeUndefined();
  });
});

describe('first pull into an empty store', () => {
  it('does not assume rows absent once another context queued a change mid-pull', async () => {
    const s = await server({ seed: 20, links: 'none' });
    const late = s.state()[18]!;
    let other: ReturnType<typeof engine> | undefined;
    let list = 0;
    const hook = spyFetch(async (url, init, real) => {
      if (url.pathname.endsWith('/subscriptions') && (init?.method ?? 'GET') === 'GET' && ++list === 2) {
        // Another tab on the same database subscribes (by its feed guid) to a feed this pull has not reached.
        other = engine(s, { dbName: first.dbName });
        other.setOnline(false);
        await other.add(late.feed_url, { guid: late.guid });
      }
      return real(url, init);
    });
    // The add must stay queued, so the row's pending state after the pull is what the pull left.
    s.failNext(50, 503, { method: 'POST' });
    const first = engine(s, { pageSize: 5, fetch: hook });
    await first.sync();
    expect(other).toBeDefined();
    expect(await first.subscription(late.guid)).toMatchObject({ guid: late.guid, pending: true });
    expect((await first.pending()).map((p) => [p.kind, p.guid])).toEqual([['add', late.guid]]);
    expect(await first.subscriptions()).toHaveLength(20);
  });
});

describe('pull against a server whose total is too small', () => {
  it('walks on to a short page instead of trusting total', async () => {
    const s = await server({ seed: 20, links: 'none' });
    const small = spyFetch(async (url, init, real) => {
      const body = await (await real(url, init)).json();
      if (url.pathname.endsWith('/subscriptions')) body.total = 10;
      return new Response(JSON.stringify(body), { status: 200 });
    });
    const e = engine(s, { pageSize: 5, fetch: small });
    await e.sync();
    expect(picture(await e.subscriptions())).toEqual(serverPicture(s));
  });
});

describe('a full listing after an interrupted first pull', () => {
  it('tombstones rows the listing no longer has (deleted in between)', async () => {
    const s = await server({ seed: 15, links: 'none' });
    let calls = 0;
    let broken = true;
    const flaky = spyFetch(async (url, init, real) => {
      if (url.pathname.endsWith('/subscriptions') && broken && ++calls === 3) throw new TypeError('connection reset');
      return real(url, init);
    });
    const e = engine(s, { pageSize: 5, fetch: flaky });
    await expect(e.sync()).rejects.toMatchObject({ code: 'network' });
    const early = s.state()[0]!;
    expect(await e.subscription(early.guid)).toBeDefined();
    s.foreign.remove(early.guid);
    broken = false;
    await e.sync();
    expect((await e.subscriptions()).map((x) => x.guid)).not.toContain(early.guid);
    expect(picture(await e.subscriptions())).toEqual(serverPicture(s));
    expect((await e.subscriptions({ includeDeleted: true })).find((x) => x.guid === early.guid)?.deleted).toBeDefined();
  });
});
