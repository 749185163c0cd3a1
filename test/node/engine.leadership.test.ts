// A sync() made before this context holds the leader lock is forwarded to the leader; when this context takes
// the lock itself (granted late by a busy browser, or the leader gone), it must run that sync() here: no
// other tab is left to answer it.
import { afterEach, describe, expect, it } from 'vitest';
import { engine, requests, server } from './helpers.ts';
import { slowLocks } from './slow-locks.ts';

let restore: (() => unknown) | undefined;
afterEach(() => {
  restore?.();
  restore = undefined;
});

describe('leadership', () => {
  it('runs here a sync() forwarded before the lock was granted, once it is', async () => {
    const s = await server({ seed: 3 });
    const locks = slowLocks();
    restore = locks.restore;
    const e = engine(s, { timeout: 3000 });
    // Bound, not yet leading: the call goes to a leader that does not exist.
    await e.subscriptions();
    const synced = e.sync();
    await new Promise((r) => setTimeout(r, 50));
    locks.grant();
    const report = await Promise.race([synced, new Promise((r) => setTimeout(() => r('no answer within 2 s'), 2000))]);
    expect(report).toMatchObject({ pending: 0, failed: 0 });
    expect(await e.subscriptions()).toHaveLength(3);
    expect(requests(s, 'GET', '/subscriptions').length).toBeGreaterThanOrEqual(1);
  });
});
