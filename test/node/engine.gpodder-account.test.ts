// Issue 16, item 4: the store is bound to protocol + server + account. setAuth() with another gPodder (or
// Nextcloud) user's credentials is refused with account-mismatch and keeps the old credentials: that user's
// list is never pulled into the store, and the queued changes never go to them.
import { afterEach, describe, expect, it } from 'vitest';
import type { Protocol } from '../../src/types.ts';
import { startGpodderServer } from '../server/gpodder/server.ts';
import { wallTime } from '../server/listen.ts';
import type { GpodderDialect, GpodderServer } from '../server/gpodder/types.ts';
import { createSyncEngine, type SyncEngine } from '../../worker/index.ts';
import type { Auth } from '../../src/types.ts';
import { settle, uniqueDb } from './helpers.ts';

const users = { alice: 'alice-password', bob: 'bob-password' };
const basic = (user: keyof typeof users): Auth => ({ type: 'basic', username: user, password: users[user] });
const feed = (n: number | string) => `https://feeds.example/show-${n}.xml`;

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close().catch(() => undefined);
});

async function gpodder(dialect: GpodderDialect): Promise<GpodderServer> {
  let now = 1_700_000_000_000;
  const s = await startGpodderServer({ port: 0, dialect, users, time: { ...wallTime, now: () => (now += 1000) } });
  open.push(s);
  return s;
}

function engine(s: GpodderServer, protocol: Exclude<Protocol, 'opa'>, options: { auth?: Auth; account?: string } = {}): SyncEngine {
  const e = createSyncEngine({
    protocol,
    baseUrl: s.url,
    device: 'web-player',
    dbName: uniqueDb(`account-${protocol}`),
    pullInterval: 0,
    pushDelay: 0,
    timeout: 2000,
    retry: { baseDelay: 10, maxDelay: 100 },
    ...options,
  });
  open.push(e);
  return e;
}

const cases: [GpodderDialect, Exclude<Protocol, 'opa'>][] = [
  ['opodsync', 'gpodder'],
  ['mygpo', 'gpodder'],
  ['opodsync', 'nextcloud'],
];

describe('setAuth() with another user', () => {
  for (const [dialect, protocol] of cases) {
    it(`${protocol} on ${dialect}: refused with account-mismatch; the store and the uploads stay alice's`, async () => {
      const s = await gpodder(dialect);
      if (dialect === 'mygpo') {
        s.registerDevice('web-player', undefined, 'alice');
        s.registerDevice('web-player', undefined, 'bob');
      }
      // mygpo keeps a list per device: this engine's device.
      const of = (user: string) => (dialect === 'mygpo' ? { user, device: 'web-player' } : { user });
      s.foreign.add([feed('alice')], of('alice'));
      s.foreign.add([feed('bob')], of('bob'));
      const e = engine(s, protocol, { auth: basic('alice') });
      await e.sync();
      e.setOnline(false);
      await e.add(feed('queued'));
      await expect(e.setAuth(basic('bob'))).rejects.toMatchObject({ code: 'account-mismatch', message: expect.stringContaining('create an engine for bob') });
      e.setOnline(true);
      await settle(e);
      // The old credentials stayed: alice's list got the change, bob's list is untouched and never pulled.
      expect((await e.subscriptions()).map((x) => x.feedUrl).sort()).toEqual([feed('alice'), feed('queued')]);
      expect(s.subscribed(of('bob'))).toEqual([feed('bob')]);
      expect(s.subscribed(of('alice')).sort()).toEqual([feed('alice'), feed('queued')]);
      // Alice's new password is fine.
      await e.setAuth({ type: 'basic', username: 'alice', password: users.alice });
      await e.sync();
    });
  }

  it('an engine started without credentials takes the account of the first ones, and refuses another after', async () => {
    const s = await gpodder('opodsync');
    s.foreign.add([feed('alice')], { user: 'alice' });
    s.foreign.add([feed('bob')], { user: 'bob' });
    const e = engine(s, 'gpodder');
    await e.setAuth(basic('alice'));
    await e.sync();
    await expect(e.setAuth(basic('bob'))).rejects.toMatchObject({ code: 'account-mismatch' });
    await e.sync();
    expect((await e.subscriptions()).map((x) => x.feedUrl)).toEqual([feed('alice')]);
  });

  it('an account option that differs from the credentials is refused when the engine is created', () => {
    expect(() =>
      createSyncEngine({ protocol: 'gpodder', baseUrl: 'http://127.0.0.1:9/', auth: basic('bob'), account: 'alice', dbName: uniqueDb('acct') }),
    ).toThrow(expect.objectContaining({ code: 'invalid' }));
  });
});
