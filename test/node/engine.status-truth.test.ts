// The status tells the truth (issue 25): a server that is down behind a proxy (502/503/504, an HTML error page)
// is unreachable like a refused connection, never "online" and idle while every request fails; a 5xx the
// server itself gave says it answered.
import { describe, expect, it } from 'vitest';
import { engine, server } from './helpers.ts';

const BAD_GATEWAY = '<!doctype html><html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>';

describe('a server down behind a proxy', () => {
  for (const status of [502, 503, 504]) {
    it(`${status} with an HTML page: unreachable (phase unreachable, not online nor offline), for a pull and for a push; the first real answer makes it online`, async () => {
      const s = await server({ seed: 2 });
      const e = engine(s, { retry: { baseDelay: 60_000, maxDelay: 60_000 } });
      await e.sync();
      expect(await e.status()).toMatchObject({ online: true, network: 'online', phase: 'idle' });
      const html = { body: BAD_GATEWAY, contentType: 'text/html' };
      s.failNext(1, status, { method: 'GET' }, html);
      await expect(e.sync()).rejects.toMatchObject({ code: 'server', status });
      // The device is online: the phase tells a UI it is the server (issue 34), without reading `network`.
      expect(await e.status()).toMatchObject({ online: false, network: 'unreachable', phase: 'unreachable', lastError: { code: 'server', status } });
      await e.sync();
      expect(await e.status()).toMatchObject({ online: true, network: 'online', phase: 'idle' });
      // A push that gets the gateway's page (the pull went through).
      s.failNext(1, status, { method: 'PATCH' }, html);
      await e.update(s.state()[0]!.guid, { isSubscribed: false });
      await e.sync();
      expect(await e.status()).toMatchObject({ online: false, network: 'unreachable', lastError: { status } });
      // Not idle, not offline (a retry may be running by now).
      expect(['unreachable', 'pulling', 'pushing']).toContain((await e.status()).phase);
    });
  }

  it('a 500 the server gave (it answered): still online', async () => {
    const s = await server({ seed: 1 });
    const e = engine(s);
    await e.sync();
    s.failNext(1, 500, { method: 'GET' });
    await expect(e.sync()).rejects.toMatchObject({ code: 'server', status: 500 });
    expect(await e.status()).toMatchObject({ online: true, network: 'online', lastError: { status: 500 } });
  });
});
