// An engine that does not know yet whether it syncs says so (issue 25): phase `starting`, not online, rather
// than `idle` with `leader: false` (a lone tab would flash "another tab syncs"). It ends when this context
// takes the lock, or when the tab that holds it answers the newcomer's hello with its status.
import { afterEach, describe, expect, it } from 'vitest';
import { engine, server, until } from './helpers.ts';
import { slowLocks } from './slow-locks.ts';

let restore: (() => unknown) | undefined;
afterEach(() => {
  restore?.();
  restore = undefined;
});

describe('an engine that has not learned who syncs', () => {
  it('says starting (not online, not idle) until it takes the lock', async () => {
    const s = await server({ seed: 1 });
    const locks = slowLocks();
    restore = locks.restore;
    const e = engine(s, { pullInterval: 0 });
    expect(await e.status()).toMatchObject({ phase: 'starting', online: false, leader: false });
    locks.grant();
    await until(async () => (await e.status()).leader, 3000, 'the lock');
    expect(await e.status()).toMatchObject({ phase: expect.not.stringMatching(/^starting$/), leader: true });
  });

  it("a second tab learns from the leader at once (its hello is answered with the leader's status)", async () => {
    const s = await server({ seed: 1 });
    const locks = slowLocks();
    restore = locks.restore;
    const a = engine(s, { pullInterval: 0 });
    locks.grant();
    await until(async () => (await a.status()).leader, 3000, 'the first tab leading');
    await a.sync();
    // Its last status events have gone out: nothing else would tell a newcomer.
    await new Promise((r) => setTimeout(r, 300));
    // The second tab waits for the lock the first holds.
    const b = engine(s, { pullInterval: 0, dbName: a.dbName });
    await until(async () => (await b.status()).phase !== 'starting', 3000, 'the leader to answer');
    expect(await b.status()).toMatchObject({ phase: 'idle', online: true, leader: false });
  });
});
