// The gPodder reference server answers CORS as the OPA reference server does (issue 25), in both dialects and
// both path families, so an app on another origin works without a proxy: a preflight is answered before
// credentials, and every answer (an error too) carries the headers. `cors: false` answers as the real
// opodsync does (test/node/server.gpodder.opodsync.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGpodderServer, type GpodderServer } from '../server/gpodder/server.ts';
import { NEXTCLOUD_BASE } from '../server/gpodder/nextcloud.ts';
import { startServer } from '../server/server.ts';

const ALICE = `Basic ${btoa('alice:alice-password')}`;
const ORIGIN = 'http://127.0.0.1:5173';
const PATHS = { api2: '/api/2/subscriptions/alice/web.json?since=0', nextcloud: `${NEXTCLOUD_BASE}/subscriptions?since=0` };

/** What a browser checks of an answer to a cross-origin request. */
const corsOf = (res: Response) => ({
  origin: res.headers.get('access-control-allow-origin'),
  methods: res.headers.get('access-control-allow-methods'),
  headers: res.headers.get('access-control-allow-headers')?.toLowerCase(),
});

for (const dialect of ['mygpo', 'opodsync'] as const) {
  describe(`the ${dialect} dialect`, () => {
    let server: GpodderServer;
    beforeAll(async () => {
      server = await startGpodderServer({ port: 0, dialect });
      // mygpo answers 404 to a device it does not know.
      await fetch(`${server.url}/api/2/devices/alice/web.json`, { method: 'POST', headers: { Authorization: ALICE }, body: '{}' });
    });
    afterAll(() => server.close());

    for (const [family, path] of Object.entries(PATHS)) {
      it(`${family}: answers a preflight (no credentials) and every answer with CORS, as the OPA server does`, async () => {
        const pre = await fetch(server.url + path, {
          method: 'OPTIONS',
          headers: { Origin: ORIGIN, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization, content-type' },
        });
        expect(pre.status).toBe(204);
        const cors = corsOf(pre);
        expect(cors.origin).toBe('*');
        expect(cors.methods).toContain('POST');
        expect(cors.headers).toContain('authorization');
        expect(cors.headers).toContain('content-type');
        const ok = await fetch(server.url + path, { headers: { Origin: ORIGIN, Authorization: ALICE } });
        expect(ok.status).toBe(200);
        expect(corsOf(ok).origin).toBe('*');
        // The app must be able to read a refusal too (a 401 it would otherwise see as a network error).
        const refused = await fetch(server.url + path, { headers: { Origin: ORIGIN, Authorization: `Basic ${btoa('alice:wrong')}` } });
        expect(refused.status).toBe(401);
        expect(corsOf(refused).origin).toBe('*');
      });
    }

    it('sends the same CORS headers as the OPA reference server', async () => {
      const opa = await startServer({ port: 0 });
      try {
        const ask = { method: 'OPTIONS', headers: { Origin: ORIGIN, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization' } };
        const [mine, theirs] = await Promise.all([fetch(server.url + PATHS.api2, ask), fetch(`${opa.url}/subscriptions`, ask)]);
        expect(corsOf(mine)).toEqual(corsOf(theirs));
        expect(mine.headers.get('access-control-expose-headers')).toBe(theirs.headers.get('access-control-expose-headers'));
      } finally {
        await opa.close();
      }
    });
  });
}
