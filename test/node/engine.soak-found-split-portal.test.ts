// Found by the gPodder chaos soak (seed 563): a proxy in front of the server answers every upload of more than one
// URL with 413 and every other with a 200 login page. The push halves an upload refused whole (400, 413) to find
// the changes refused; a login page refuses nothing, and every other half would get it too: the halving stops at
// the first such answer, and what it left unsent waits with it. Halved to the last change, 252 adds made about
// 700 requests in a burst (the soak stopped it at 800 timers in a simulated second). The Open Podcast API's POST
// of adds halves on 413 the same way, and holds the same rule.
import { afterEach, describe, expect, it } from 'vitest';
import { createSyncEngine, type SyncEngine } from '../../worker/index.ts';
import { startGpodderServer } from '../server/gpodder/server.ts';
import { engine, server, spyFetch, uniqueDb, until } from './helpers.ts';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close().catch(() => undefined);
});

const html = () => new Response('<!doctype html><html><body><form action="/login">Sign in</form></body></html>', { status: 200, headers: { 'Content-Type': 'text/html' } });

describe('gPodder: an upload split on 413 whose halves a proxy answers with a login page', () => {
  it('stops halving at the first login page: every change waits, none is sent again in that push', async () => {
    const s = await startGpodderServer({ port: 0, dialect: 'opodsync' });
    open.push(s);
    const answers: string[] = [];
    let proxy = false;
    const fetch = spyFetch(async (url, init, real) => {
      if (proxy && init?.method === 'POST' && url.pathname.includes('/subscriptions')) {
        const { add = [], remove = [] } = JSON.parse(String(init.body)) as { add?: string[]; remove?: string[] };
        const many = add.length + remove.length > 1;
        answers.push(many ? '413' : 'login');
        return many ? new Response('', { status: 413 }) : html();
      }
      return real(url, init);
    });
    const e = createSyncEngine({
      protocol: 'gpodder',
      baseUrl: s.url,
      auth: { type: 'basic', username: 'alice', password: 'alice-password' },
      device: 'web-player',
      dbName: uniqueDb('split-portal'),
      pullInterval: 0,
      pushDelay: 0,
      timeout: 2000,
      retry: { baseDelay: 60_000, maxDelay: 60_000 },
      fetch,
    });
    open.push(e);
    // 40 → 20 → 10 → 5 → 3 → 2 → 1: six 413s, then the login page, and nothing after it.
    await addManyBehindTheProxy(e, () => (proxy = true), answers);
  });
});

describe('OPA: a POST of adds split on 413 whose halves a proxy answers with a login page', () => {
  it('stops halving at the first login page: every add waits, none is sent again in that push', async () => {
    const s = await server({ seed: 0 });
    const answers: string[] = [];
    let proxy = false;
    const e = engine(s, {
      retry: { baseDelay: 60_000, maxDelay: 60_000 },
      fetch: spyFetch(async (url, init, real) => {
        if (!proxy || init?.method !== 'POST') return real(url, init);
        const many = (JSON.parse(String(init.body)) as { subscriptions: unknown[] }).subscriptions.length > 1;
        answers.push(many ? '413' : 'login');
        return many ? new Response('', { status: 413 }) : html();
      }),
    });
    // 40 → 20 → 10 → 5 → 2 → 1: five 413s, then the login page, and nothing after it.
    await addManyBehindTheProxy(e, () => (proxy = true), answers);
  });
});

/** 40 adds made offline, sent once the proxy answers: one login page ends the halving, every add waits with it. */
async function addManyBehindTheProxy(e: SyncEngine, proxyOn: () => void, answers: string[]): Promise<void> {
  await e.sync();
  e.setOnline(false);
  await e.addMany(Array.from({ length: 40 }, (_, i) => `https://feeds.example/split-portal/${i}.xml`));
  proxyOn();
  e.setOnline(true);
  await until(async () => (await e.pending()).every((c) => c.attempts === 1), 5000, 'every add tried once');
  expect(answers.filter((a) => a === 'login')).toHaveLength(1);
  expect(answers.at(-1)).toBe('login');
  expect(answers.length).toBeLessThanOrEqual(7);
  const pending = await e.pending();
  expect(pending).toHaveLength(40);
  expect(pending.every((c) => c.lastError?.code === 'bad-response')).toBe(true);
}
