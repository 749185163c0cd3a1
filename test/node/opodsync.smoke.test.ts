// The opodsync harness proven with plain HTTP against the real server: both dialects, auth, a bad URL,
// and a restart. What it pins is written up in test/support/opodsync-observed.md.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { basic } from '../server/gpodder/client.ts';
import { startOpodsync, type Opodsync } from '../support/opodsync.ts';
import { describeOpodsync } from '../support/opodsync-suite.ts';

interface Changes {
  add: string[];
  remove: string[];
  update_urls: unknown[];
  timestamp: number;
}

describeOpodsync('opodsync (real server) smoke', () => {
  let peer: Opodsync;
  beforeAll(async () => {
    peer = await startOpodsync();
  });
  afterAll(() => peer?.stop());

  const call = async <T = unknown>(method: string, path: string, body?: unknown, auth = basic(peer.username, peer.password)) => {
    const res = await fetch(peer.baseUrl + path, { method, headers: { Authorization: auth }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : undefined) as T };
  };
  const gpodder = (since?: number) => call<Changes>('GET', `/api/2/subscriptions/${peer.username}/web.json${since === undefined ? '' : `?since=${since}`}`);
  const nextcloud = (since: number) => call<Changes>('GET', `/index.php/apps/gpoddersync/subscriptions?since=${since}`);
  const isSeconds = (t: number) => Number.isInteger(t) && Math.abs(t - Date.now() / 1000) < 24 * 3600;

  it('registers a device', async () => {
    const res = await call('POST', `/api/2/devices/${peer.username}/web.json`, { caption: 'Web player', type: 'desktop' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ code: 200, message: 'Device updated' });
  });

  it('gPodder: uploads add/remove, answers a timestamp in seconds, and a pull since 0 lists them', async () => {
    const up = await call<{ timestamp: number; update_urls: unknown[] }>('POST', `/api/2/subscriptions/${peer.username}/web.json`, {
      add: ['https://a.example/feed.xml', 'http://Mixed.Case.example/x?'],
      remove: ['https://never.example/feed.xml'],
    });
    expect(up.status).toBe(200);
    expect(up.body.update_urls).toEqual([]);
    expect(isSeconds(up.body.timestamp)).toBe(true);
    const all = await gpodder(0);
    expect(all.status).toBe(200);
    expect(new Set(all.body.add)).toEqual(new Set(['https://a.example/feed.xml', 'http://Mixed.Case.example/x?']));
    expect(all.body.remove).toContain('https://never.example/feed.xml');
    expect(all.body.update_urls).toEqual([]);
    expect(isSeconds(all.body.timestamp)).toBe(true);
    // Inclusive since: the second the upload was stamped with is answered again.
    expect((await gpodder(up.body.timestamp)).body.add).toContain('https://a.example/feed.xml');
    expect((await gpodder(up.body.timestamp + 3600)).body.add).toEqual([]);
  });

  it('gPodder: since missing or not a number counts as 0, and the device is not looked at', async () => {
    expect((await gpodder()).body.add).toContain('https://a.example/feed.xml');
    const other = await call<Changes>('GET', `/api/2/subscriptions/${peer.username}/never-registered.json?since=abc`);
    expect(other.status).toBe(200);
    expect(other.body.add).toContain('https://a.example/feed.xml');
  });

  it('Nextcloud: uploads add/remove on the same list and pulls it', async () => {
    const up = await call<{ timestamp: number; update_urls: unknown[] }>('POST', '/index.php/apps/gpoddersync/subscription_change/create', {
      add: ['https://nc.example/feed.xml'],
      remove: ['https://a.example/feed.xml'],
    });
    expect(up.status).toBe(200);
    expect(up.body).toEqual({ timestamp: up.body.timestamp, update_urls: [] });
    const all = await nextcloud(0);
    expect(all.body.add).toContain('https://nc.example/feed.xml');
    expect(all.body.remove).toContain('https://a.example/feed.xml');
    expect((await gpodder(0)).body.remove).toContain('https://a.example/feed.xml');
  });

  it('a URL in both lists is accepted and ends removed', async () => {
    const res = await call('POST', `/api/2/subscriptions/${peer.username}/web.json`, { add: ['https://both.example/f'], remove: ['https://both.example/f'] });
    expect(res.status).toBe(200);
    const all = await gpodder(0);
    expect(all.body.remove).toContain('https://both.example/f');
    expect(all.body.add).not.toContain('https://both.example/f');
  });

  it('wrong or missing credentials: 401 on both path families', async () => {
    const wrong = basic(peer.username, 'not-the-password');
    const cases = [
      await call('GET', `/api/2/subscriptions/${peer.username}/web.json?since=0`, undefined, wrong),
      await call('GET', '/index.php/apps/gpoddersync/subscriptions?since=0', undefined, wrong),
      await call('GET', `/api/2/subscriptions/${peer.username}/web.json?since=0`, undefined, ''),
    ];
    expect(cases.map((r) => r.status)).toEqual([401, 401, 401]);
    expect(cases[0].body).toEqual({ code: 401, message: 'Invalid username/password' });
    expect(cases[0].headers.get('www-authenticate')).toBe('Basic realm="Please login"');
  });

  it('a bad URL refuses the whole request with 400 and stores nothing of it', async () => {
    for (const path of [`/api/2/subscriptions/${peer.username}/web.json`, '/index.php/apps/gpoddersync/subscription_change/create']) {
      const res = await call('POST', path, { add: ['https://good-but-refused.example/f', ' https://space.example/f'] });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ code: 400, message: 'Invalid URL:  https://space.example/f' });
    }
    const all = await gpodder(0);
    expect([...all.body.add, ...all.body.remove]).not.toContain('https://good-but-refused.example/f');
  });

  it('stop closes the port; restart serves the same data', async () => {
    const before = await gpodder(0);
    await peer.stop();
    await expect(fetch(peer.baseUrl)).rejects.toThrow();
    await peer.restart();
    const after = await gpodder(0);
    expect(after.status).toBe(200);
    expect(new Set(after.body.add)).toEqual(new Set(before.body.add));
    expect(new Set(after.body.remove)).toEqual(new Set(before.body.remove));
  });
});
