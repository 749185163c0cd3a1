// Subscription rows on disk: a plain row (the view is the server base) is stored compact, and every read
// through openSyncDatabase gives the full row back, whatever Dexie call made it.
import { Dexie } from 'dexie';
import { describe, expect, it } from 'vitest';
import { openSyncDatabase, type StoredSubscription } from '../../src/schema.ts';
import { uniqueDb } from './helpers.ts';

const plain: StoredSubscription = {
  guid: 'g1',
  feedUrl: 'https://a.example/feed.xml',
  isSubscribed: true,
  pending: 0,
  base: { guid: 'g1', feedUrl: 'https://a.example/feed.xml', isSubscribed: true, subscriptionChanged: '2024-01-01T00:00:00.000Z', at: 1704067200000, dataAt: 1704067200000 },
};
const tombstone: StoredSubscription = {
  guid: 'g2',
  feedUrl: 'https://b.example/feed.xml',
  isSubscribed: false,
  deleted: '2024-01-03T00:00:00.000Z',
  pending: 0,
  base: { guid: 'g2', feedUrl: 'https://b.example/feed.xml', isSubscribed: false, guidChanged: '2024-01-02T00:00:00.000Z', deleted: '2024-01-03T00:00:00.000Z', at: 1704240000000, dataAt: 0 },
};
const edited: StoredSubscription = { ...plain, guid: 'g3', isSubscribed: false, pending: 1, base: { ...plain.base!, guid: 'g3' } };
// subscriptionChanged written otherwise than toISOString would (whole seconds, an offset), and none at all.
const secondsOnly: StoredSubscription = {
  ...plain,
  guid: 'g4',
  base: { ...plain.base!, guid: 'g4', subscriptionChanged: '2024-01-01T00:00:00Z' },
};
const noStamp: StoredSubscription = {
  guid: 'g5',
  feedUrl: 'https://c.example/feed.xml',
  isSubscribed: true,
  pending: 0,
  base: { guid: 'g5', feedUrl: 'https://c.example/feed.xml', isSubscribed: true, at: 0, dataAt: 0 },
};

describe('stored rows', () => {
  it('stores plain rows compact and reads every row back whole', async () => {
    const name = uniqueDb('rows');
    const db = openSyncDatabase(name);
    await db.subscriptions.bulkPut([plain, tombstone, edited, secondsOnly, noStamp]);

    // What is on disk, read without the codec.
    const raw = new Dexie(name);
    raw.version(2).stores({ subscriptions: 'guid', outbox: '++id, guid, state', aliases: 'from', meta: 'key' });
    const stored = await raw.table('subscriptions').toArray();
    raw.close();
    // The usual stamp is `at` as toISOString writes it: not stored twice.
    expect(stored.find((r) => r.guid === 'g1')).toEqual({ guid: 'g1', url: plain.feedUrl, sub: true, at: 1704067200000 });
    expect(stored.find((r) => r.guid === 'g4')).toEqual({ guid: 'g4', url: plain.feedUrl, sub: true, at: 1704067200000, sc: '2024-01-01T00:00:00Z' });
    expect(stored.find((r) => r.guid === 'g5')).toEqual({ guid: 'g5', url: noStamp.feedUrl, sub: true, at: 0, sc: '' });
    expect(stored.find((r) => r.guid === 'g2')).toMatchObject({ url: tombstone.feedUrl, sub: false, da: 0, gc: '2024-01-02T00:00:00.000Z', del: '2024-01-03T00:00:00.000Z' });
    // A row with queued changes keeps its full shape.
    expect(stored.find((r) => r.guid === 'g3')).toEqual(edited);

    const byGuid = (rows: (StoredSubscription | undefined)[]) => Object.fromEntries(rows.map((r) => [r!.guid, r]));
    const want = { g1: plain, g2: tombstone, g3: edited, g4: secondsOnly, g5: noStamp };
    expect(await db.subscriptions.get('g1')).toEqual(plain);
    expect(await db.subscriptions.get('g5')).toEqual(noStamp);
    expect(byGuid(await db.subscriptions.bulkGet(['g1', 'g2', 'g3', 'g4', 'g5']))).toEqual(want);
    expect(byGuid(await db.subscriptions.toArray())).toEqual(want);
    const seen: StoredSubscription[] = [];
    await db.subscriptions.each((r) => void seen.push(r));
    expect(byGuid(seen)).toEqual(want);
    expect(await db.subscriptions.filter((r) => r.feedUrl === tombstone.feedUrl).first()).toEqual(tombstone);
    expect(await db.subscriptions.toCollection().primaryKeys()).toEqual(['g1', 'g2', 'g3', 'g4', 'g5']);
    db.close();
  });
});
