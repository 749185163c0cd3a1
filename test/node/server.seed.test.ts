// `seed` fills the list every protocol's client reads (issue 19 §4): the engine, with its default device,
// pulls the seeded subscriptions over OPA, gPodder (both dialects) and the Nextcloud paths.
import { afterEach, describe, expect, it } from 'vitest';
import { startGpodderServer, type GpodderDialect, type GpodderServer } from '../server/gpodder/server.ts';
import { engine, server } from './helpers.ts';

const open: GpodderServer[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

describe('--seed K reaches every protocol', () => {
  it('opa: the seeded entries are what the client pulls', async () => {
    const s = await server({ seed: 10 });
    const e = engine(s);
    await e.sync();
    expect((await e.subscriptions()).map((x) => x.guid).sort()).toEqual(s.state().map((x) => x.guid).sort());
  });

  for (const [protocol, dialect] of [['gpodder', 'mygpo'], ['nextcloud', 'mygpo'], ['gpodder', 'opodsync'], ['nextcloud', 'opodsync']] as const) {
    it(`${protocol} on the ${dialect} dialect: the client with its default device pulls all 10`, async () => {
      const s = await startGpodderServer({ dialect: dialect as GpodderDialect, seed: 10 });
      open.push(s);
      // No `device` option: the engine's default (opa-sync), as a newcomer's client runs it.
      const e = engine(s, { protocol, auth: { type: 'basic', username: 'alice', password: 'alice-password' } });
      await e.sync();
      const urls = (await e.subscriptions()).map((x) => x.feedUrl).sort();
      expect(urls).toHaveLength(10);
      expect(urls).toEqual(s.subscribed().sort());
    });
  }

  it('mygpo: the seed registers the default device (or the one named) and fills its list and the account list', async () => {
    const s = await startGpodderServer({ seed: 4, seedDevice: 'kitchen-radio' });
    open.push(s);
    expect(s.devices()).toEqual([{ id: 'kitchen-radio', caption: '', type: 'other', subscriptions: 4 }]);
    expect(s.subscribed({ device: 'kitchen-radio' })).toEqual(s.subscribed());
    s.reset();
    expect(s.subscribed({ device: 'kitchen-radio' })).toHaveLength(4);
  });
});
