// A hostile world, Open Podcast API side (issue 16, items 7, 11, 12, 13, 18): a device clock stepped back
// mid-pull, feed URLs and guids from the server that the app's own rules refuse, a `next` chain that never
// ends, and credentials in `baseUrl`. Real HTTP to the reference server; hostile answers come from a fetch
// wrapper in front of it.
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../src/types.ts';
import { systemClock } from '../../worker/clock.ts';
import { createSyncEngine } from '../../worker/index.ts';
import { dump, engine, server, spyFetch, uniqueDb } from './helpers.ts';

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
const isList = (url: URL, init: RequestInit | undefined) => (init?.method ?? 'GET') === 'GET' && url.pathname.endsWith('/subscriptions');
const HOSTILE = ['javascript:alert(document.domain)', 'data:text/html,<script>alert(1)</script>', 'vbscript:msgbox(1)', 'file:///etc/passwd'];

/** A fetch that rewrites every list page's body (after the real server answered). */
function rewriteLists(edit: (body: { total: number; subscriptions: Record<string, unknown>[] } & Record<string, unknown>, url: URL) => void): typeof fetch {
  return spyFetch(async (url, init, real) => {
    const response = await real(url, init);
    if (!isList(url, init) || response.status !== 200) return response;
    const body = (await response.json()) as Parameters<typeof edit>[0];
    edit(body, url);
    return json(body);
  });
}

describe('item 7: a device clock stepped back during a pull', () => {
  for (const monotonic of [true, false]) {
    it(`keeps the cursor at server times it saw, so a later change is pulled (${monotonic ? 'with' : 'without'} a monotonic clock)`, async () => {
      const s = await server({ seed: 30 });
      let back = 0;
      const clock: Clock = { ...systemClock, now: () => Date.now() - back };
      if (!monotonic) delete clock.monotonic;
      // The wall clock steps back an hour while the second page is fetched (NTP, a user fixing the time).
      const fetch = spyFetch(async (url, init, real) => {
        if (isList(url, init) && url.searchParams.get('page') === '2') back = 3_600_000;
        return real(url, init);
      });
      const e = engine(s, { pageSize: 10, clock, fetch });
      const report = await e.sync();
      const newest = Math.max(...s.state().map((entry) => Date.parse(entry.subscription_changed ?? '') || 0));
      expect(Date.parse(report.cursor!)).toBeLessThanOrEqual(newest);

      // Another device changes a subscription after the pull: its server time is below the bad cursor.
      const guid = s.state()[3]!.guid;
      s.foreign.patch(guid, { is_subscribed: false });
      await e.sync();
      expect((await e.subscription(guid))?.isSubscribed).toBe(false);
    });
  }
});

describe('item 11: feed URLs from the server obey the app rule (trimmed http/https)', () => {
  it('listed entries with script, data or file URLs are never stored; untrimmed ones are trimmed, not a second row', async () => {
    const s = await server({ seed: 6 });
    const real = s.state();
    const fetch = rewriteLists((body) => {
      body.subscriptions.push(...HOSTILE.map((url, i) => ({ guid: `evil-${i}`, feed_url: url, is_subscribed: true, subscription_changed: new Date().toISOString() })));
      // The server lists its own entry padded: the same feed, not another one.
      const first = body.subscriptions.find((entry) => entry.guid === real[0]!.guid);
      if (first) first.feed_url = `  ${String(first.feed_url)}\n`;
      body.total = body.subscriptions.length;
    });
    const e = engine(s, { fetch });
    await e.sync();
    const view = await e.subscriptions();
    expect(view.map((v) => v.guid).sort()).toEqual(real.map((r) => r.guid).sort());
    for (const v of view) expect(v.feedUrl).toMatch(/^https?:\/\/\S+$/);
    expect(view.find((v) => v.guid === real[0]!.guid)?.feedUrl).toBe(real[0]!.feed_url);
    const stored = await dump(e.dbName);
    for (const url of ['javascript:', 'data:text', 'vbscript:', 'file:']) expect(stored).not.toContain(url);
    // The skipped entries still count as listed: the drain was consistent the first time (one GET, no redrain).
    expect(s.log().filter((r) => r.method === 'GET').length).toBe(1);
  });

  it('an existing subscription the server now lists with a script URL keeps its last good address', async () => {
    const s = await server({ seed: 3 });
    let evil = false;
    const fetch = rewriteLists((body) => {
      if (!evil) return;
      for (const entry of body.subscriptions) entry.feed_url = HOSTILE[0];
    });
    const e = engine(s, { fetch });
    await e.sync();
    const before = await e.subscriptions();
    evil = true;
    s.foreign.patch(s.state()[0]!.guid, { is_subscribed: false });
    await e.sync();
    expect(await e.subscriptions()).toEqual(before);
  });

  it('a PATCH answer with a script new_feed_url is refused: nothing stored, the change stays queued', async () => {
    const s = await server({ seed: 2 });
    let evil = true;
    const fetch = spyFetch(async (url, init, real) => {
      const response = await real(url, init);
      if (evil && init?.method === 'PATCH' && response.status === 200) return json({ new_feed_url: HOSTILE[0], is_subscribed: false });
      return response;
    });
    const e = engine(s, { fetch });
    await e.sync();
    const guid = s.state()[0]!.guid;
    await e.update(guid, { feedUrl: 'https://feeds.example/moved.xml', isSubscribed: false });
    await e.sync().catch(() => undefined);
    expect(await e.pending()).toHaveLength(1);
    expect((await e.subscription(guid))?.feedUrl).toBe('https://feeds.example/moved.xml');
    expect(await dump(e.dbName)).not.toContain('javascript:');
    // Once the server answers sanely the change goes, nothing lost.
    evil = false;
    await e.sync();
    await e.sync();
    expect(await e.pending()).toHaveLength(0);
    expect(s.entry(guid)?.feed_url).toBe('https://feeds.example/moved.xml');
  });

  it('a POST answer with a data: feed_url is refused: nothing stored, the add stays queued', async () => {
    const s = await server();
    const fetch = spyFetch(async (url, init, real) => {
      const response = await real(url, init);
      if (init?.method !== 'POST' || response.status !== 200) return response;
      const body = (await response.json()) as { success: Record<string, unknown>[] };
      for (const item of body.success) item.feed_url = HOSTILE[1];
      return json(body);
    });
    const e = engine(s, { fetch });
    await e.add('https://feeds.example/new.xml');
    await e.sync().catch(() => undefined);
    expect((await e.pending()).map((p) => p.kind)).toEqual(['add']);
    expect((await e.subscriptions()).map((v) => v.feedUrl)).toEqual(['https://feeds.example/new.xml']);
    expect(await dump(e.dbName)).not.toContain('data:text');
  });
});

describe('item 12: guids . and .. never change a request path', () => {
  it('the app cannot name them', async () => {
    const s = await server({ seed: 1 });
    const e = engine(s);
    for (const guid of ['.', '..']) {
      await expect(e.add('https://feeds.example/a.xml', { guid })).rejects.toMatchObject({ code: 'invalid' });
      await expect(e.update(guid, { isSubscribed: false })).rejects.toMatchObject({ code: 'invalid' });
      await expect(e.update(s.state()[0]!.guid, { guid })).rejects.toMatchObject({ code: 'invalid' });
      await expect(e.remove(guid)).rejects.toMatchObject({ code: 'invalid' });
    }
    expect(await e.pending()).toHaveLength(0);
  });

  it('the server cannot make the engine address them: listed ones are skipped, an answer naming one is refused', async () => {
    const s = await server({ seed: 2 });
    const sent: string[] = [];
    const [a, b] = s.state();
    let evil = false;
    const fetch = spyFetch(async (url, init, real) => {
      const method = init?.method ?? 'GET';
      if (method !== 'GET') sent.push(`${method} ${url.pathname}`);
      const response = await real(url, init);
      if (method === 'PATCH' && response.status === 200) return json({ new_guid: '..', guid_changed: new Date().toISOString() });
      if (!evil || !isList(url, init) || response.status !== 200) return response;
      const body = (await response.json()) as { total: number; subscriptions: Record<string, unknown>[] };
      const at = new Date().toISOString();
      body.subscriptions.push({ guid: '..', feed_url: 'https://feeds.example/dots.xml', is_subscribed: true, subscription_changed: at });
      // A chain to `.` would re-key a's row to a guid whose PATCH goes to the collection.
      const entry = body.subscriptions.find((e) => e.guid === a!.guid)!;
      Object.assign(entry, { new_guid: '.', guid_changed: at });
      body.total = body.subscriptions.length;
      return json(body);
    });
    const e = engine(s, { fetch });
    await e.sync();
    // The next pull re-reads both entries (the overlap): `..` is skipped, and so is a's chain to `.`.
    evil = true;
    await e.sync();
    expect((await e.subscriptions()).map((v) => v.guid).sort()).toEqual([a!.guid, b!.guid].sort());
    await e.update(a!.guid, { isSubscribed: false });
    await e.update(b!.guid, { guid: 'b-renamed' });
    await e.sync().catch(() => undefined);
    await e.sync().catch(() => undefined);
    const base = new URL(s.url).pathname;
    for (const request of sent) expect(request).toMatch(new RegExp(`^(PATCH|DELETE) ${base}/subscriptions/[^/]+$`));
    expect(sent).toContain(`PATCH ${base}/subscriptions/${a!.guid}`);
    // b's rename was answered with `new_guid: ".."`: refused, so it stays queued and nothing is re-keyed.
    expect((await e.subscriptions()).map((v) => v.guid).sort()).toEqual([a!.guid, 'b-renamed'].sort());
    expect((await e.pending()).some((p) => p.guid === b!.guid || p.guid === 'b-renamed')).toBe(true);
  });
});

describe('item 13: a `next` chain that runs far past `total`', () => {
  it('is refused as bad-response after a few pages; the cursor is not advanced', async () => {
    const s = await server({ seed: 1 });
    let lists = 0;
    const fetch = spyFetch(async (url, init, real) => {
      if (!isList(url, init)) return real(url, init);
      lists++;
      const page = Number(url.searchParams.get('page') ?? '1');
      if (page > 5000) return json({ total: 1, page, per_page: 500, subscriptions: [] });
      const at = new Date(Date.UTC(2024, 0, 1) + page * 1000).toISOString();
      return json({
        total: 1,
        page,
        per_page: 500,
        next: `?page=${page + 1}&per_page=500`,
        subscriptions: [{ guid: `g-${page}`, feed_url: `https://feeds.example/${page}.xml`, is_subscribed: true, subscription_changed: at }],
      });
    });
    const e = engine(s, { fetch });
    await expect(e.sync()).rejects.toMatchObject({ code: 'bad-response' });
    expect(lists).toBeLessThan(30);
    expect((await e.status()).cursor).toBeUndefined();
  });

  it('a server whose `total` is each page length is still drained to the end', async () => {
    const s = await server({ seed: 60 });
    const fetch = rewriteLists((body) => {
      body.total = body.subscriptions.length;
    });
    const e = engine(s, { pageSize: 2, fetch });
    await e.sync();
    expect(await e.subscriptions()).toHaveLength(60);
  });
});

describe('item 18: credentials in baseUrl', () => {
  it('are refused as invalid with a hint to use auth, before any database is named after them', () => {
    let error: unknown;
    try {
      createSyncEngine({ baseUrl: 'https://ana:s3cret-pass@sync.example/v1', dbName: uniqueDb() });
    } catch (caught) {
      error = caught;
    }
    expect(error).toMatchObject({ code: 'invalid' });
    expect(String((error as Error).message)).toMatch(/pass them as auth: \{ type: 'basic', username, password \}/);
    expect(String((error as Error).message)).not.toContain('s3cret-pass');
    expect(() => createSyncEngine({ baseUrl: 'https://token@sync.example/v1', dbName: uniqueDb() })).toThrow(/auth/);
  });
});
