// A first pull into an empty store skips reading rows that cannot exist, and queues each page behind the one
// still committing. Once a change is queued (by another tab) nothing can be assumed absent: the page's unit
// of work is run again reading everything, so the queued change's row is merged, not overwritten.
import { describe, expect, it } from 'vitest';
import { openSyncDatabase } from '../../src/schema.ts';
import type { FreshPull } from '../../worker/store/store.ts';
import { createStore } from '../../worker/store/store.ts';
import type { RemoteEntry } from '../../worker/transport.ts';
import { uniqueDb } from './helpers.ts';

const entry = (n: number): RemoteEntry => ({
  guid: `g-${n}`,
  feedUrl: `https://feeds.example/${n}.xml`,
  isSubscribed: true,
  subscriptionChanged: new Date(1_700_000_000_000 + n).toISOString(),
  at: 1_700_000_000_000 + n,
  dataAt: 1_700_000_000_000 + n,
});

describe('store: a first pull into an empty store', () => {
  it('merges a row another context queued a change for mid-pull', async () => {
    const store = createStore(openSyncDatabase(uniqueDb('fresh')), () => 'local-1');
    await store.bind({ server: 'http://127.0.0.1:1/v1' });
    const fresh: FreshPull = { written: new Map(), batches: 0 };
    // Pages of more than a few entries: a small edit reads its rows' queued changes whatever it assumes.
    const page = (from: number) => Array.from({ length: 20 }, (_, i) => entry(from + i));
    await store.applyEntries(page(0), undefined, fresh);
    // Another tab adds the feed of g-23 under its guid before the pull's next page reaches it.
    await store.add('https://feeds.example/23.xml', 'g-23', 5, new Set());
    await store.applyEntries(page(20), undefined, fresh);
    const row = await store.db.subscriptions.get('g-23');
    expect(row).toMatchObject({ guid: 'g-23', pending: 1, base: { guid: 'g-23', isSubscribed: true } });
    expect(await store.db.subscriptions.count()).toBe(40);
    store.db.close();
  });

  it('queues pages: a page issued while the one before commits sees what that one wrote', async () => {
    const store = createStore(openSyncDatabase(uniqueDb('fresh-queue')), () => 'local-1');
    await store.bind({ server: 'http://127.0.0.1:1/v1' });
    const fresh: FreshPull = { written: new Map(), batches: 0 };
    const older = { ...entry(7), feedUrl: 'https://feeds.example/old.xml', at: 1, dataAt: 1, subscriptionChanged: new Date(1).toISOString() };
    // Not awaited in between: the second page's unit of work runs before the first commits. Its entry for
    // g-7 is older, so it must read the first page's row and keep it (never going back in time).
    const first = store.applyEntries([entry(7)], undefined, fresh);
    const second = store.applyEntries([older], undefined, fresh);
    await Promise.all([first, second]);
    expect(await store.db.subscriptions.get('g-7')).toMatchObject({ feedUrl: 'https://feeds.example/7.xml' });
    store.db.close();
  });
});
