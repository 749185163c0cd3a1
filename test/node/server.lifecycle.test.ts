import { describe, expect, it } from 'vitest';
import { createApi } from '../server/client.ts';
import { startServer } from '../server/server.ts';

describe('lifecycle', () => {
  it('listens on 127.0.0.1 at a free port and exposes url, origin and port', async () => {
    const a = await startServer({ port: 0 });
    const b = await startServer({ port: 0 });
    try {
      expect(a.port).toBeGreaterThan(0);
      expect(a.port).not.toBe(b.port);
      expect(a.origin).toBe(`http://127.0.0.1:${a.port}`);
      expect(a.url).toBe(`${a.origin}/v1`);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('closes promptly with a request stuck in latency, a keep-alive socket and a pending deletion', async () => {
    const server = await startServer({ port: 0, deletionDelayMs: 60_000 });
    const api = createApi(server.url);
    server.foreign.add('https://a.example/feed.xml', 'ga');
    expect((await api('DELETE', '/subscriptions/ga')).status).toBe(202);
    server.setLatency(60_000);
    const stuck = api('GET', '/subscriptions');
    await new Promise((r) => setTimeout(r, 50));
    const started = performance.now();
    await server.close();
    expect(performance.now() - started).toBeLessThan(1_000);
    await expect(stuck).rejects.toThrow();
    await expect(fetch(`${server.url}/subscriptions`)).rejects.toThrow();
    await server.close(); // a second close is harmless
  });

  it('starts with the seed option and restores it on reset', async () => {
    const server = await startServer({ port: 0, seed: 12 });
    try {
      expect(server.state()).toHaveLength(12);
      server.foreign.add('https://extra.example/feed.xml');
      server.reset();
      expect(server.state()).toHaveLength(12);
    } finally {
      await server.close();
    }
  });

  it('answers GET for an unknown guid with 404', async () => {
    const server = await startServer({ port: 0 });
    try {
      const res = await createApi(server.url)('GET', '/subscriptions/nobody');
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ code: 404, message: 'Resource not found' });
    } finally {
      await server.close();
    }
  });
});
