import { describe, expect, it } from 'vitest';
import { serverPerFile } from './server-fixture.ts';
import { type WirePostResult, type WireSubscriptionPage } from '../server/server.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const ctx = serverPerFile();

const post = (subscriptions: unknown) => ctx.api<WirePostResult>('POST', '/subscriptions', { body: { subscriptions } });

describe('POST /subscriptions adds', () => {
  it('creates entries, with a server-made UUID when no guid is given', async () => {
    const res = await post([{ feed_url: 'https://a.example/feed.xml' }, { feed_url: 'https://b.example/feed.xml', guid: 'from-feed' }]);
    expect(res.status).toBe(200);
    expect(res.body.failure).toEqual([]);
    const [a, b] = res.body.success;
    expect(Object.keys(a).sort()).toEqual(['feed_url', 'guid', 'is_subscribed', 'subscription_changed']);
    expect(a).toMatchObject({ feed_url: 'https://a.example/feed.xml', is_subscribed: true });
    expect(a.guid).toMatch(UUID);
    expect(b).toMatchObject({ feed_url: 'https://b.example/feed.xml', guid: 'from-feed', is_subscribed: true });
    expect(ctx.server.state().map((s) => s.guid)).toEqual([a.guid, 'from-feed']);
    expect(ctx.server.entry(a.guid)?.subscription_changed).toBe(a.subscription_changed);
  });

  it('fails per item for a feed URL without http(s), keeping the good ones', async () => {
    const res = await post([
      { feed_url: 'example.com/rss4' },
      { feed_url: 'https://ok.example/feed.xml' },
      { feed_url: 'ftp://files.example/feed.xml' },
      { feed_url: 'https://' },
    ]);
    expect(res.status).toBe(200);
    expect(res.body.success.map((s) => s.feed_url)).toEqual(['https://ok.example/feed.xml']);
    expect(res.body.failure).toEqual([
      { feed_url: 'example.com/rss4', message: 'No protocol present' },
      { feed_url: 'ftp://files.example/feed.xml', message: 'Unsupported protocol' },
      { feed_url: 'https://', message: 'Invalid URL' },
    ]);
    expect(ctx.server.state()).toHaveLength(1);
  });

  it('answers an empty list with two empty lists', async () => {
    const res = await post([]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: [], failure: [] });
  });

  it('refuses a malformed body with 405 and adds nothing', async () => {
    const bodies = ['{"subscriptions": [', '{}', '[]', '{"subscriptions": "https://a.example/"}', '{"subscriptions": [{"guid": "x"}]}',
      '{"subscriptions": [{"feed_url": 5}]}', '{"subscriptions": [{"feed_url": "https://a.example/", "guid": 5}]}',
      '{"subscriptions": [{"feed_url": "https://a.example/"}, "https://b.example/"]}', ''];
    for (const raw of bodies) {
      const res = await ctx.api('POST', '/subscriptions', { raw });
      expect(res.status, raw).toBe(405);
      expect(res.body).toEqual({ code: 405, message: 'Input could not be validated' });
    }
    expect(ctx.server.state()).toEqual([]);
  });
});

describe('POST /subscriptions upserts', () => {
  it('re-subscribes an existing entry found by feed URL, keeping its guid', async () => {
    const a = ctx.server.foreign.add('https://a.example/feed.xml', 'ga');
    ctx.server.foreign.patch('ga', { is_subscribed: false });
    const res = await post([{ feed_url: a.feed_url, guid: 'other-guid' }]);
    expect(res.body.success).toEqual([
      { feed_url: a.feed_url, guid: 'ga', is_subscribed: true, subscription_changed: ctx.server.entry('ga')!.subscription_changed },
    ]);
    expect(ctx.server.state()).toHaveLength(1);
    expect(ctx.server.entry('other-guid')).toBeUndefined();
  });

  it('finds an entry by guid first and takes the posted feed URL', async () => {
    ctx.server.foreign.add('https://a.example/feed.xml', 'ga');
    const res = await post([{ feed_url: 'https://moved.example/feed.xml', guid: 'ga' }]);
    expect(res.body.success[0]).toMatchObject({ guid: 'ga', feed_url: 'https://moved.example/feed.xml' });
    expect(ctx.server.state().map((s) => [s.guid, s.feed_url])).toEqual([['ga', 'https://moved.example/feed.xml']]);
  });

  it('is safe to replay: a repeat changes nothing, not even the timestamp', async () => {
    const first = await post([{ feed_url: 'https://a.example/feed.xml' }]);
    const again = await post([{ feed_url: 'https://a.example/feed.xml' }]);
    expect(again.body).toEqual(first.body);
    expect(ctx.server.state()).toHaveLength(1);
  });

  it('reinstates a deleted subscription', async () => {
    const a = ctx.server.foreign.add('https://a.example/feed.xml', 'ga');
    const gone = ctx.server.foreign.remove('ga');
    expect((await ctx.api('GET', '/subscriptions/ga')).status).toBe(410);
    const res = await post([{ feed_url: a.feed_url }]);
    expect(res.body.success[0]).toMatchObject({ guid: 'ga', is_subscribed: true });
    expect((await ctx.api('GET', '/subscriptions/ga')).status).toBe(200);
    expect(ctx.server.entry('ga')?.deleted).toBeUndefined();
    const changes = await ctx.api<WireSubscriptionPage>('GET', `/subscriptions?since=${encodeURIComponent(gone.deleted!)}`);
    expect(changes.body.subscriptions).toEqual([
      { feed_url: a.feed_url, guid: 'ga', is_subscribed: true, subscription_changed: res.body.success[0].subscription_changed },
    ]);
  });
});
