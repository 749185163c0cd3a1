import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApi, type ApiCall } from '../server/client.ts';
import { startServer, type RefServer, type ServerEntryView, type WirePatchResult } from '../server/server.ts';

const INVALID = { code: 405, message: 'Input could not be validated' };

let server: RefServer;
let api: ApiCall;
let entry: ServerEntryView;
beforeAll(async () => {
  server = await startServer({ port: 0 });
  api = createApi(server.url);
});
afterAll(() => server.close());
beforeEach(() => {
  server.reset();
  entry = server.foreign.add('https://old.example/feed.xml', 'guid-1');
});

const patch = (body: unknown, guid = 'guid-1') => api<WirePatchResult>('PATCH', `/subscriptions/${guid}`, { body });

describe('PATCH /subscriptions/{guid} answers with only what changed', () => {
  // subscription_changed is "the time the subscription flag or feed address changed" (interface.md),
  // so a new address reports it; the flag did not change and stays out of the answer.
  it('new_feed_url alone: the address and subscription_changed, not the unchanged flag', async () => {
    const res = await patch({ new_feed_url: 'https://new.example/feed.xml' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      new_feed_url: 'https://new.example/feed.xml',
      subscription_changed: server.entry('guid-1')!.subscription_changed,
    });
    expect(res.body).not.toHaveProperty('is_subscribed');
    expect(res.body.subscription_changed! > entry.subscription_changed!).toBe(true);
    expect(server.entry('guid-1')?.feed_url).toBe('https://new.example/feed.xml');
  });

  it('is_subscribed alone: the flag and subscription_changed', async () => {
    const res = await patch({ is_subscribed: false });
    expect(res.body).toEqual({ is_subscribed: false, subscription_changed: server.entry('guid-1')!.subscription_changed });
    expect(server.entry('guid-1')?.is_subscribed).toBe(false);
  });

  it('new_guid alone: the new guid and guid_changed, subscription_changed untouched', async () => {
    const res = await patch({ new_guid: 'guid-2' });
    expect(res.body).toEqual({ new_guid: 'guid-2', guid_changed: server.entry('guid-2')!.guid_changed });
    expect(server.entry('guid-2')).toMatchObject({ guid: 'guid-2', subscription_changed: entry.subscription_changed });
  });

  it('all three at once share one timestamp', async () => {
    const res = await patch({ new_feed_url: 'https://new.example/feed.xml', is_subscribed: false, new_guid: 'guid-2' });
    expect(Object.keys(res.body).sort()).toEqual(['guid_changed', 'is_subscribed', 'new_feed_url', 'new_guid', 'subscription_changed']);
    expect(res.body.guid_changed).toBe(res.body.subscription_changed);
  });

  it('a value equal to the current one is no change: empty body, timestamps kept', async () => {
    const res = await patch({ new_feed_url: entry.feed_url, is_subscribed: true, new_guid: 'guid-1' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    expect(server.entry('guid-1')).toEqual(entry);
  });

  it('reports only the field that really changed when another one is a no-op', async () => {
    const res = await patch({ new_feed_url: entry.feed_url, is_subscribed: false });
    expect(res.body).toEqual({ is_subscribed: false, subscription_changed: expect.any(String) });
  });

  it('a new address with the flag it already has reports the address, not the flag', async () => {
    const res = await patch({ new_feed_url: 'https://new.example/feed.xml', is_subscribed: true });
    expect(res.body).toEqual({ new_feed_url: 'https://new.example/feed.xml', subscription_changed: expect.any(String) });
  });

  it('the flag and the address both changed: both reported with one subscription_changed', async () => {
    const res = await patch({ new_feed_url: 'https://new.example/feed.xml', is_subscribed: false });
    expect(res.body).toEqual({
      new_feed_url: 'https://new.example/feed.xml',
      is_subscribed: false,
      subscription_changed: server.entry('guid-1')!.subscription_changed,
    });
  });

  it('a rename plus a no-op flag reports the rename only, subscription_changed untouched', async () => {
    const res = await patch({ new_guid: 'guid-2', is_subscribed: true });
    expect(res.body).toEqual({ new_guid: 'guid-2', guid_changed: server.entry('guid-2')!.guid_changed });
    expect(server.entry('guid-2')?.subscription_changed).toBe(entry.subscription_changed);
  });

  it('renaming to a guid that already resolves here (an old guid of this entry) is no change: {}', async () => {
    await patch({ new_guid: 'guid-2' });
    const before = server.entry('guid-2');
    const res = await patch({ new_guid: 'guid-1' }, 'guid-2');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    expect(server.entry('guid-2')).toEqual(before);
  });

  it('the other-device handle answers the same partial body as HTTP', () => {
    expect(server.foreign.patch('guid-1', { new_feed_url: 'https://other.example/feed.xml' })).toEqual({
      new_feed_url: 'https://other.example/feed.xml',
      subscription_changed: server.entry('guid-1')!.subscription_changed,
    });
    expect(server.foreign.patch('guid-1', { is_subscribed: true })).toEqual({});
  });

  it('ignores unknown fields next to known ones', async () => {
    const res = await patch({ is_subscribed: false, colour: 'blue' });
    expect(res.status).toBe(200);
    expect(res.body.is_subscribed).toBe(false);
  });
});

describe('PATCH validation and lookups', () => {
  it('refuses empty, unknown-only, wrongly typed and non-object bodies with 405 and changes nothing', async () => {
    const bodies: unknown[] = [
      {},
      { colour: 'blue' },
      { is_subscribed: 'false' },
      { is_subscribed: null },
      { new_guid: 5 },
      { new_guid: '' },
      { new_feed_url: 'ftp://old.example/feed.xml' },
      { new_feed_url: 'not a url' },
      { new_feed_url: 42 },
      [{ is_subscribed: false }],
      null,
      'is_subscribed',
    ];
    for (const body of bodies) {
      const res = await patch(body);
      expect(res.status, JSON.stringify(body)).toBe(405);
      expect(res.body).toEqual(INVALID);
    }
    const broken = await api('PATCH', '/subscriptions/guid-1', { raw: '{"is_subscribed": fal' });
    expect(broken.status).toBe(405);
    const empty = await api('PATCH', '/subscriptions/guid-1');
    expect(empty.status).toBe(405);
    expect(server.entry('guid-1')).toEqual(entry);
  });

  it('answers 404 for an unknown guid with a valid body', async () => {
    const res = await patch({ is_subscribed: false }, 'nobody');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 404, message: 'Resource not found' });
  });

  it('validates the body before looking the guid up', async () => {
    expect((await patch({}, 'nobody')).status).toBe(405);
  });

  it('answers 410 for a deleted subscription', async () => {
    server.foreign.remove('guid-1');
    const res = await patch({ is_subscribed: true });
    expect(res.status).toBe(410);
    expect(res.body).toEqual({ code: 410, message: 'Subscription has been deleted' });
  });

  it('decodes an escaped guid in the path', async () => {
    server.foreign.add('https://odd.example/feed.xml', 'odd guid/with slash');
    const res = await patch({ is_subscribed: false }, encodeURIComponent('odd guid/with slash'));
    expect(res.status).toBe(200);
    expect(server.entry('odd guid/with slash')?.is_subscribed).toBe(false);
  });
});
