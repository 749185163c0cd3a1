import { describe, expect, it } from 'vitest';
import { serverPerFile } from './server-fixture.ts';
import { type WireSubscription, type WireSubscriptionPage } from '../server/server.ts';

const ctx = serverPerFile();

const list = async (cursor?: string): Promise<WireSubscription[]> => {
  const q = cursor === undefined ? '' : `?since=${encodeURIComponent(cursor)}`;
  return (await ctx.api<WireSubscriptionPage>('GET', `/subscriptions${q}`)).body.subscriptions;
};
const before = (iso: string) => new Date(Date.parse(iso) - 1).toISOString();

/** g1 → g2 → g3, with the two change times. */
function chain() {
  const made = ctx.server.foreign.add('https://chain.example/feed.xml', 'g1');
  const first = ctx.server.foreign.patch('g1', { new_guid: 'g2' }).guid_changed!;
  const second = ctx.server.foreign.patch('g2', { new_guid: 'g3' }).guid_changed!;
  return { made, first, second };
}

describe('guid chains', () => {
  it('reports g1 -> g2 -> g3 as guid g1, new_guid g3 without since', async () => {
    const { second } = chain();
    expect(await list()).toEqual([
      expect.objectContaining({ guid: 'g1', new_guid: 'g3', guid_changed: second }),
    ]);
  });

  it('reports the guid as it was at since', async () => {
    const { made, first, second } = chain();
    expect((await list(before(made.subscription_changed!)))[0]).toMatchObject({ guid: 'g1', new_guid: 'g3' });
    expect((await list(before(first)))[0]).toMatchObject({ guid: 'g1', new_guid: 'g3' });
    // Between the two changes the client knew the entry as g2.
    expect((await list(first))[0]).toMatchObject({ guid: 'g2', new_guid: 'g3', guid_changed: second });
    expect(await list(second)).toEqual([]);
  });

  it('reports the newest guid without new_guid once only other fields changed after since', async () => {
    const { second } = chain();
    const patch = ctx.server.foreign.patch('g1', { is_subscribed: false });
    const [entry] = await list(second);
    expect(entry).toEqual({
      feed_url: 'https://chain.example/feed.xml',
      guid: 'g3',
      is_subscribed: false,
      subscription_changed: patch.subscription_changed,
      guid_changed: second,
    });
  });

  it('follows the chain from an old guid for GET, PATCH and POST', async () => {
    chain();
    const got = await ctx.api<WireSubscription>('GET', '/subscriptions/g1');
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ guid: 'g1', new_guid: 'g3' });
    const newest = await ctx.api<WireSubscription>('GET', '/subscriptions/g3');
    expect(newest.body.guid).toBe('g3');
    expect(newest.body.new_guid).toBeUndefined();

    const patched = await ctx.api('PATCH', '/subscriptions/g2', { body: { is_subscribed: false } });
    expect(patched.status).toBe(200);
    expect(ctx.server.entry('g3')?.is_subscribed).toBe(false);

    const posted = await ctx.api<{ success: WireSubscription[] }>('POST', '/subscriptions', {
      body: { subscriptions: [{ feed_url: 'https://chain.example/feed.xml', guid: 'g1' }] },
    });
    expect(posted.body.success[0]).toMatchObject({ guid: 'g3', is_subscribed: true });
    expect(ctx.server.state()).toHaveLength(1);
    expect(ctx.server.state()[0]).toMatchObject({ guid: 'g3', old_guids: ['g1', 'g2'] });
  });

  it('treats a rename to a former guid of the same entry as no change', async () => {
    chain();
    const res = await ctx.api('PATCH', '/subscriptions/g3', { body: { new_guid: 'g1' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    expect(ctx.server.entry('g1')?.guid).toBe('g3');
  });
});

describe('collapse into an existing entry', () => {
  it('points the old entry at the existing one and leaves that one as it was', async () => {
    const a = ctx.server.foreign.add('https://a.example/feed.xml', 'ga');
    const b = ctx.server.foreign.add('https://b.example/feed.xml', 'gb');
    const res = await ctx.api<Record<string, unknown>>('PATCH', '/subscriptions/ga', { body: { new_guid: 'gb' } });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['guid_changed', 'new_guid']);
    expect(res.body.new_guid).toBe('gb');

    const target = ctx.server.entry('gb')!;
    expect(target).toEqual({ ...b, old_guids: ['ga'] });
    expect(ctx.server.entry('ga')).toEqual(target);
    expect(ctx.server.state().map((s) => s.guid)).toEqual(['gb']);

    const changed = await list(b.subscription_changed);
    expect(changed).toEqual([
      {
        feed_url: a.feed_url,
        guid: 'ga',
        is_subscribed: true,
        subscription_changed: a.subscription_changed,
        new_guid: 'gb',
        guid_changed: res.body.guid_changed,
      },
    ]);
    // The snapshot lists current subscriptions only: the collapsed entry is not one.
    expect((await list()).map((s) => s.guid)).toEqual(['gb']);
  });

  it('reports the newest guid of the target when new_guid names an older link of it', async () => {
    ctx.server.foreign.add('https://a.example/feed.xml', 'ga');
    ctx.server.foreign.add('https://b.example/feed.xml', 'gb');
    ctx.server.foreign.patch('gb', { new_guid: 'gb2' });
    const res = await ctx.api<{ new_guid?: string }>('PATCH', '/subscriptions/ga', { body: { new_guid: 'gb' } });
    expect(res.body.new_guid).toBe('gb2');
    ctx.server.foreign.patch('gb2', { new_guid: 'gb3' });
    const [alias] = (await list('2000-01-01T00:00:00.000Z')).filter((s) => s.guid === 'ga');
    expect(alias.new_guid).toBe('gb3');
  });

  it('sends requests for the old guid to the existing entry', async () => {
    ctx.server.foreign.add('https://a.example/feed.xml', 'ga');
    ctx.server.foreign.add('https://b.example/feed.xml', 'gb');
    ctx.server.foreign.patch('ga', { new_guid: 'gb' });
    expect((await ctx.api('PATCH', '/subscriptions/ga', { body: { is_subscribed: false } })).status).toBe(200);
    expect(ctx.server.entry('gb')?.is_subscribed).toBe(false);
    const got = await ctx.api<WireSubscription>('GET', '/subscriptions/ga');
    expect(got.body).toMatchObject({ guid: 'ga', new_guid: 'gb', feed_url: 'https://b.example/feed.xml' });
  });

  it('refuses to collapse into a deleted entry with 405 and changes nothing', async () => {
    const a = ctx.server.foreign.add('https://a.example/feed.xml', 'ga');
    ctx.server.foreign.add('https://b.example/feed.xml', 'gb');
    ctx.server.foreign.remove('gb');
    const res = await ctx.api('PATCH', '/subscriptions/ga', { body: { new_guid: 'gb', is_subscribed: false } });
    expect(res.status).toBe(405);
    expect(ctx.server.entry('ga')).toEqual(a);
  });
});
