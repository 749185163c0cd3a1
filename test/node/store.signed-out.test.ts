// A sign-out sticks: after clear() (in this tab or another), no background run (the pull interval, a status
// wake-up, the leader's start) binds the store again and pulls the account back in; the app's own next sync()
// or edit does.
import { describe, expect, it } from 'vitest';
import { openSyncDatabase } from '../../src/schema.ts';
import { engine, server, uniqueDb } from './helpers.ts';

async function meta(dbName: string): Promise<Record<string, unknown>> {
  const db = openSyncDatabase(dbName);
  try {
    return Object.fromEntries((await db.meta.toArray()).map((m) => [m.key, m.value]));
  } finally {
    db.close();
  }
}

describe('signed out by clear()', () => {
  it("another tab's clear() is not undone by this tab's timers; this tab's sync() binds again", async () => {
    const s = await server({ seed: 5 });
    const dbName = uniqueDb('signed-out');
    // This tab pulls every 20 ms; the other tab signs out.
    const leader = engine(s, { dbName, pullInterval: 20 });
    await leader.sync();
    const other = engine(s, { dbName, pullInterval: 0 });
    await other.clear();
    // A run of this tab already under way when the other tab cleared may still finish its requests (it writes
    // nothing: its epoch is gone); count from once it is over.
    await new Promise((r) => setTimeout(r, 150));
    const requests = s.log().length;
    await new Promise((r) => setTimeout(r, 300));
    expect(await leader.subscriptions()).toEqual([]);
    expect((await meta(dbName)).binding).toBeUndefined();
    // No pull went out: a timer's run found the store signed out and did nothing.
    expect(s.log().length).toBe(requests);
    await leader.sync();
    expect(await leader.subscriptions()).toHaveLength(5);
    expect(await meta(dbName)).toMatchObject({ binding: { server: s.url } });
    expect((await meta(dbName)).signedOut).toBeUndefined();
  });

  it('an edit after the sign-out binds the store again (the app uses it), and its push goes', async () => {
    const s = await server({ seed: 1 });
    const dbName = uniqueDb('signed-out-edit');
    const e = engine(s, { dbName });
    await e.sync();
    await e.clear();
    await e.add('https://feeds.example/after-sign-out.xml');
    await e.sync();
    expect(s.state().some((x) => x.feed_url === 'https://feeds.example/after-sign-out.xml')).toBe(true);
  });
});
