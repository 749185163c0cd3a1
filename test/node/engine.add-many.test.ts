// addMany (issue 33): every feed not subscribed already, added in one transaction with one `change` event, queued
// as add() queues it; a report of what was added, what was there, what was passed over and why.
import { describe, expect, it } from 'vitest';
import { SyncError } from '../../src/errors.ts';
import { engine, server, settle } from './helpers.ts';

describe('addMany()', () => {
  it('adds the new feeds in one change event, reports the rest, and the outbox sends them as adds', async () => {
    const s = await server({ seed: 2 });
    const e = engine(s);
    await e.sync();
    const [there] = await e.subscriptions({ subscribed: true });
    e.setOnline(false);
    const events: string[][] = [];
    e.on('change', (c) => events.push(c.guids));
    const report = await e.addMany([
      'https://a.example/feed',
      ' https://b.example/feed ',
      there!.feedUrl,
      'javascript:alert(1)',
      'feed.xml',
      'https://a.example/feed',
    ]);
    expect(report).toEqual({
      added: ['https://a.example/feed', 'https://b.example/feed'],
      alreadyThere: [there!.feedUrl],
      skipped: [
        { url: 'javascript:alert(1)', reason: 'not-a-feed-url' },
        { url: 'feed.xml', reason: 'not-a-feed-url' },
        { url: 'https://a.example/feed', reason: 'duplicate' },
      ],
    });
    expect(events).toHaveLength(1);
    expect(events[0]).toHaveLength(2);
    const pending = await e.pending();
    expect(pending.map((c) => [c.kind, c.feedUrl])).toEqual([
      ['add', 'https://a.example/feed'],
      ['add', 'https://b.example/feed'],
    ]);
    e.setOnline(true);
    await settle(e);
    expect(await e.pending()).toEqual([]);
    const onServer = (await e.subscriptions({ subscribed: true })).map((r) => r.feedUrl);
    expect(onServer).toEqual(expect.arrayContaining(['https://a.example/feed', 'https://b.example/feed', there!.feedUrl]));
    await e.close();
  });

  it('re-subscribing an unsubscribed row counts as added; a feed already queued counts as there', async () => {
    const s = await server({ seed: 2 });
    const e = engine(s);
    await e.sync();
    const [row] = await e.subscriptions({ subscribed: true });
    await e.update(row!.guid, { isSubscribed: false });
    await settle(e);
    e.setOnline(false);
    await e.add('https://queued.example/feed');
    const report = await e.addMany([row!.feedUrl, 'https://queued.example/feed']);
    expect(report).toEqual({ added: [row!.feedUrl], alreadyThere: ['https://queued.example/feed'], skipped: [] });
    expect(await e.subscription(row!.guid)).toMatchObject({ isSubscribed: true, pending: true });
    e.setOnline(true);
    await settle(e);
    expect(s.entry(row!.guid)?.is_subscribed).toBe(true);
    await e.close();
  });

  it('nothing new: no event, nothing queued', async () => {
    const s = await server({ seed: 2 });
    const e = engine(s);
    await e.sync();
    const feeds = (await e.subscriptions({ subscribed: true })).map((r) => r.feedUrl);
    let events = 0;
    e.on('change', () => events++);
    expect(await e.addMany(feeds)).toEqual({ added: [], alreadyThere: feeds, skipped: [] });
    expect(await e.addMany([])).toEqual({ added: [], alreadyThere: [], skipped: [] });
    expect(events).toBe(0);
    expect(await e.pending()).toEqual([]);
    await e.close();
  });

  it('a list that is not an array, or over 10,000 URLs, is `invalid` and queues nothing', async () => {
    const s = await server({ seed: 0 });
    const e = engine(s);
    e.setOnline(false);
    const many = Array.from({ length: 10_001 }, (_, i) => `https://x.example/${i}`);
    for (const bad of ['https://a.example/feed', undefined, { length: 1, 0: 'https://a.example/feed' }, many]) {
      const error = await e.addMany(bad as string[]).catch((x: unknown) => x);
      expect(error).toBeInstanceOf(SyncError);
      expect((error as SyncError).code).toBe('invalid');
      expect((error as SyncError).message).toMatch(/array of at most 10000 feed URLs/);
    }
    expect(await e.pending()).toEqual([]);
    expect(await e.subscriptions()).toEqual([]);
    await e.close();
  });
});
