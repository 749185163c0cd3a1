import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApi, type ApiCall } from '../server/client.ts';
import { startServer, type RefServer, type WireSubscriptionPage } from '../server/server.ts';

const N = 100_000;

let server: RefServer;
let api: ApiCall;
beforeAll(async () => {
  server = await startServer({ port: 0, seed: N });
  api = createApi(server.url);
});
afterAll(() => server.close());

async function drain(query: string): Promise<{ guids: string[]; ms: number; requests: number }> {
  const started = performance.now();
  const guids: string[] = [];
  let requests = 0;
  for (let page = 1; ; page++) {
    const res = await api<WireSubscriptionPage>('GET', `/subscriptions?per_page=500&page=${page}${query}`);
    requests++;
    guids.push(...res.body.subscriptions.map((s) => s.guid));
    if (!res.body.next) break;
  }
  return { guids, ms: performance.now() - started, requests };
}

describe('100,000 entries', () => {
  it('serves a full drain in pages of 500 quickly, every entry once', async () => {
    const { guids, ms, requests } = await drain('');
    expect(requests).toBe(200);
    expect(new Set(guids).size).toBe(N);
    // Generous bound: an O(n) filter per page would still pass, a sort or a quadratic step would not.
    expect(ms).toBeLessThan(10_000);
  });

  it('serves a since drain of the newer half, the boundary entry excluded', async () => {
    const state = server.state();
    const cursor = state[N / 2 - 1].subscription_changed!;
    const { guids } = await drain(`&since=${encodeURIComponent(cursor)}`);
    expect(guids).toEqual(state.slice(N / 2).map((s) => s.guid));
  });

  it('has distinct feed URLs and guids, some unsubscribed', () => {
    const state = server.state();
    expect(new Set(state.map((s) => s.feed_url)).size).toBe(N);
    expect(new Set(state.map((s) => s.guid)).size).toBe(N);
    const unsubscribed = state.filter((s) => !s.is_subscribed).length;
    expect(unsubscribed).toBeGreaterThan(N * 0.05);
    expect(unsubscribed).toBeLessThan(N * 0.15);
    expect(state.every((s) => /^https?:\/\/[a-z0-9.-]+\.example\//.test(s.feed_url))).toBe(true);
  });
});
