// Issue 16, item 5: reads never claim the store. After clear() the store belongs to no one: reads on the same
// engine answer empty and claim nothing, so the next engine (another server, same dbName) takes it; only a
// write or a sync binds it. A read of a store bound to another server is still refused.
import { describe, expect, it } from 'vitest';
import { openSyncDatabase } from '../../src/schema.ts';
import { engine, server, uniqueDb } from './helpers.ts';

async function binding(dbName: string): Promise<unknown> {
  const db = openSyncDatabase(dbName);
  try {
    return (await db.meta.get('binding'))?.value;
  } finally {
    db.close();
  }
}

describe('reads of an unbound store', () => {
  it('after clear(), subscriptions(), pending(), failed(), subscription() and status() answer empty and claim nothing', async () => {
    const one = await server({ seed: 2 });
    const two = await server({ seed: 3 });
    const dbName = uniqueDb('unbound-reads');
    const first = engine(one, { dbName });
    await first.sync();
    const guid = (await first.subscriptions())[0]!.guid;
    await first.clear();
    expect(await first.subscriptions()).toEqual([]);
    expect(await first.subscriptions({ includeDeleted: true })).toEqual([]);
    expect(await first.pending()).toEqual([]);
    expect(await first.failed()).toEqual([]);
    expect(await first.subscription(guid)).toBeUndefined();
    expect(await first.status()).toMatchObject({ pending: 0, failed: 0 });
    expect(await binding(dbName)).toBeUndefined();
    await first.close();
    // The store is free: another server's engine takes it.
    const second = engine(two, { dbName });
    await second.sync();
    expect(await second.subscriptions()).toHaveLength(3);
    expect(await binding(dbName)).toMatchObject({ server: two.url });
  });

  it('a read of a store bound to another server is refused; a write after clear() binds it again', async () => {
    const one = await server({ seed: 2 });
    const two = await server({ seed: 1 });
    const dbName = uniqueDb('unbound-write');
    const first = engine(one, { dbName });
    await first.sync();
    await first.clear();
    await first.subscriptions();
    // A write binds: the store is this engine's again.
    await first.add('https://feeds.example/after-clear.xml');
    expect(await binding(dbName)).toMatchObject({ server: one.url });
    await first.close();
    const second = engine(two, { dbName });
    await expect(second.subscriptions()).rejects.toMatchObject({ code: 'account-mismatch' });
    await expect(second.pending()).rejects.toMatchObject({ code: 'account-mismatch' });
  });
});
