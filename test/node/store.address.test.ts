// A queued change is addressed to the server by its row's server guid: a guid change made while that change is
// in flight re-keys its row (the lost change of chaos seed 307), and the server still knows it by the old guid.
import { describe, expect, it } from 'vitest';
import { openSyncDatabase } from '../../src/schema.ts';
import { createStore } from '../../worker/store/store.ts';
import { uniqueDb } from './helpers.ts';

describe('store: addressing a queued change', () => {
  it('finds the server guid after a guid change re-keyed the row behind the push', async () => {
    const store = createStore(openSyncDatabase(uniqueDb('address')), () => 'local-1');
    await store.bind({ server: 'http://127.0.0.1:1/v1' });
    // An add, sent; a feed URL change queued behind it (no server guid known yet when it was queued).
    const { result: added } = await store.add('https://feeds.example/a.xml', 'a-1', 1, new Set());
    expect(added.guid).toBe('a-1');
    const { result: [handed] } = await store.handOut((pending) => pending, 'tab', 1);
    await store.update('a-1', { feedUrl: 'https://feeds.example/b.xml' }, 2, new Set());
    // The add is acknowledged: the row has a server base now and the update is the head of its queue.
    await store.acks([{ sent: handed!.change, type: 'added', entry: { guid: 'a-1', feedUrl: 'https://feeds.example/a.xml', isSubscribed: true } }]);
    const [update] = await store.pendingChanges();
    expect(update).toMatchObject({ kind: 'update', guid: 'a-1' });
    expect(update!.serverGuid).toBeUndefined();
    // The push hands it out: addressed to the server's guid, a-1.
    const { result: [item] } = await store.handOut((pending) => pending, 'tab', 2);
    expect(item).toMatchObject({ change: { id: update!.id }, target: 'a-1', isSubscribed: true });
    // The app renames the subscription while it is in flight: the row is keyed g-1 now.
    const { result: view } = await store.update('a-1', { guid: 'g-1' }, 3, new Set([update!.id!]));
    expect(view.guid).toBe('g-1');
    // The queue read again names the row by its new key: the server still knows it as a-1.
    const [again] = await store.pendingChanges();
    expect(again).toMatchObject({ id: update!.id, guid: 'g-1' });
    expect((await store.sendItems([again!]))[0]).toMatchObject({ target: 'a-1', isSubscribed: true });
    store.db.close();
  });
});
