// A hostile world, gPodder side of issue 16 item 11: the server's feed URLs obey the app's own rule (trimmed
// http/https) in pull answers (`add`, `remove`, `update_urls`) and upload answers (`update_urls`). Real HTTP
// to the gPodder reference server (opodsync dialect); hostile answers come from a fetch wrapper in front of it.
import { afterEach, describe, expect, it } from 'vitest';
import { startGpodderServer } from '../server/gpodder/server.ts';
import type { GpodderServer } from '../server/gpodder/types.ts';
import { wallTime } from '../server/listen.ts';
import { createSyncEngine, type SyncEngine } from '../../worker/index.ts';
import { dump, spyFetch, uniqueDb } from './helpers.ts';

const HOSTILE = ['javascript:alert(document.domain)', 'data:text/html,<script>alert(1)</script>', 'vbscript:msgbox(1)', 'file:///etc/passwd'];
const json = (body: unknown) => new Response(JSON.stringify(body), { status: 200, headers: { 'Content-Type': 'application/json' } });

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close().catch(() => undefined);
});

async function gpodder(): Promise<GpodderServer> {
  let now = 1_700_000_000_000;
  const s = await startGpodderServer({ port: 0, dialect: 'opodsync', time: { ...wallTime, now: () => (now += 1000) } });
  open.push(s);
  return s;
}

function engine(s: GpodderServer, fetch: typeof globalThis.fetch): SyncEngine & { dbName: string } {
  const dbName = uniqueDb('gpodder-urls');
  const e = createSyncEngine({
    protocol: 'gpodder',
    baseUrl: s.url,
    auth: { type: 'basic', username: 'alice', password: 'alice-password' },
    device: 'web-player',
    dbName,
    fetch,
    pullInterval: 0,
    pushDelay: 0,
    timeout: 2000,
    retry: { baseDelay: 10, maxDelay: 100 },
  });
  open.push(e);
  return Object.assign(e, { dbName });
}

/** A fetch that rewrites the subscription answers of one method (after the real server answered). */
function rewrite(method: 'GET' | 'POST', edit: (body: Record<string, unknown>) => void): typeof fetch {
  return spyFetch(async (url, init, real) => {
    const response = await real(url, init);
    if ((init?.method ?? 'GET') !== method || !url.pathname.includes('/subscriptions/') || response.status !== 200) return response;
    const body = (await response.json()) as Record<string, unknown>;
    edit(body);
    return json(body);
  });
}

describe('item 11 over gPodder: feed URLs from the server obey the app rule', () => {
  it('a pull answer: script, data and file URLs are skipped; padded ones are the same feed', async () => {
    const s = await gpodder();
    const [one, two, three] = s.seed(3);
    const fetch = rewrite('GET', (body) => {
      const add = body.add as string[];
      add.push(...HOSTILE, ` ${one}\n`);
      body.remove = [HOSTILE[0], `\t${three} `];
      body.update_urls = [
        [two, HOSTILE[0]],
        [HOSTILE[2], one],
      ];
    });
    const e = engine(s, fetch);
    await e.sync();
    const view = await e.subscriptions();
    // The padded `remove` of three is three's removal; the rewrite of two to a script URL is ignored.
    expect(view.map((v) => [v.feedUrl, v.isSubscribed]).sort()).toEqual([
      [one, true],
      [three, false],
      [two, true],
    ].sort());
    const stored = await dump(e.dbName);
    for (const url of ['javascript:', 'data:text', 'vbscript:', 'file:']) expect(stored).not.toContain(url);
  });

  it('an upload answer rewriting a URL to a script URL is no answer for that change: it stays queued, the rest of the upload goes', async () => {
    const s = await gpodder();
    const evil = 'https://feeds.example/evil.xml';
    const good = 'https://feeds.example/good.xml';
    const fetch = rewrite('POST', (body) => {
      body.update_urls = [[evil, HOSTILE[0]]];
    });
    const e = engine(s, fetch);
    await e.add(evil);
    await e.add(good);
    await e.sync();
    // Not the server's refusal (nothing in failed()): an unreadable answer for it, as after a proxy's login page.
    expect((await e.pending()).map((p) => p.guid)).toEqual([evil]);
    expect((await e.pending())[0]!.lastError).toMatchObject({ code: 'bad-response' });
    expect(await e.failed()).toEqual([]);
    expect((await e.subscriptions()).find((v) => v.feedUrl === good)).toMatchObject({ pending: false });
    const stored = await dump(e.dbName);
    expect(stored).not.toContain('javascript:');
  });
});
