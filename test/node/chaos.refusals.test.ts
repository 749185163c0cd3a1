// Server refusals under the invariant checker: 404, 405, 400, 410 on PATCH, a POST refused inside its 200 body,
// a deletion the server rolls back. Each lands in failed() with the server's own message; the rest of the
// queue keeps flowing in the same run (no head-of-line blocking, across and within subscriptions); retry()
// delivers, discard() restores the server's view; nothing is lost on the way.
import { describe, expect, it } from 'vitest';
import { checkInvariants } from '../chaos/invariants.ts';
import { Model } from '../chaos/model.ts';
import { engine, requests, server, settle, spyFetch } from './helpers.ts';

describe('chaos: refusals', () => {
  it('every kind of refusal lands in failed() with the server message; the others land in the same run; retry and discard work', async () => {
    const s = await server({ seed: 8 });
    s.setDeletionDelay(10);
    let refusePost = true;
    const e = engine(s, {
      fetch: spyFetch(async (url, init, real) => {
        const body = typeof init?.body === 'string' ? init.body : '';
        if (init?.method === 'POST' && refusePost && body.includes('blocked.example')) {
          // Refused per item inside a 200, as POST /subscriptions reports it.
          return new Response(JSON.stringify({ success: [], failure: [{ feed_url: 'https://blocked.example/feed.xml', message: 'Feed is blocked on this server' }] }), { status: 200 });
        }
        return real(url, init);
      }),
    });
    const model = new Model();
    for (const view of s.state()) model.fromServer(view);
    await e.sync();
    const [a, b, c, d, f, g, h] = s.state().map((x) => x.guid) as string[];
    const sub = (guid: string) => model.byHandle(guid)!;
    s.failNext(1, 405, { method: 'PATCH', path: `/subscriptions/${a}` });
    s.failNext(1, 400, { method: 'PATCH', path: `/subscriptions/${b}` }, { body: JSON.stringify({ code: 400, message: 'new_feed_url is not a URL we accept' }), contentType: 'application/json' });
    s.failNext(1, 404, { method: 'PATCH', path: `/subscriptions/${d}` });
    s.foreign.remove(c!);
    model.foreignRemove(sub(c!));
    s.deletionOutcome('failure', 1);
    e.setOnline(false);
    for (const [guid, change] of [
      [a, { isSubscribed: false }],
      [b, { feedUrl: 'https://b.example/new.xml' }],
      [c, { isSubscribed: false }],
      [d, { feedUrl: 'https://d.example/new.xml' }],
      [f, { isSubscribed: false }],
      [g, { feedUrl: 'https://g.example/new.xml' }],
    ] as const) {
      await e.update(guid!, change);
      model.localUpdate(sub(guid!), change);
    }
    await e.remove(h!);
    const blocked = await e.add('https://blocked.example/feed.xml');
    const blockedSub = model.localAdd('https://blocked.example/feed.xml', undefined, blocked.guid);
    e.setOnline(true);

    // One run: the refused ones fail, the others land in that same run.
    const report = await e.sync();
    expect(report.failed).toBeGreaterThanOrEqual(5);
    expect(s.entry(f!)?.is_subscribed).toBe(false);
    expect(s.entry(g!)?.feed_url).toBe('https://g.example/new.xml');
    await settle(e);
    const failed = await e.failed();
    const reason = (guid: string) => failed.find((x) => x.guid === guid)?.reason;
    expect(reason(a!)).toMatchObject({ code: 'invalid', status: 405, message: expect.stringContaining('Input could not be validated') });
    expect(reason(b!)).toMatchObject({ code: 'invalid', status: 400, message: expect.stringContaining('new_feed_url is not a URL we accept') });
    expect(reason(c!)).toMatchObject({ code: 'gone', status: 410, message: expect.stringContaining('Subscription has been deleted') });
    expect(reason(d!)).toMatchObject({ code: 'not-found', status: 404, message: expect.stringContaining('Resource not found') });
    expect(reason(h!)).toMatchObject({ message: expect.stringMatching(/rolled back/) });
    expect(failed.find((x) => x.kind === 'add')?.reason.message).toContain('Feed is blocked on this server');
    expect((await e.status()).failed).toBe(failed.length);
    // Refused changes no longer shape the view: the server's state shows.
    expect((await e.subscription(a!))?.isSubscribed).toBe(s.entry(a!)?.is_subscribed);
    expect((await e.subscription(h!))?.deleted).toBeUndefined();

    // The app deals with them: retry what can now succeed, discard the rest.
    refusePost = false;
    for (const change of failed) {
      const target = change.kind === 'add' ? blockedSub : model.byHandle(change.guid);
      if (change.guid === c || change.guid === b) {
        await e.discard(change.id);
        model.excuse(target!);
      } else {
        await e.retry(change.id);
        model.retried(target!, change);
      }
    }
    await settle(e);
    expect(await e.failed()).toEqual([]);
    expect(s.entry(h!)?.deleted).toBeDefined();
    await checkInvariants({ engine: e, server: s, model });
  });

  it('a refused change does not block later changes to the same subscription; retrying it later is a new write', async () => {
    const s = await server({ seed: 2 });
    const e = engine(s);
    const model = new Model();
    for (const view of s.state()) model.fromServer(view);
    await e.sync();
    const guid = s.state()[0]!.guid;
    s.failNext(1, 405, { method: 'PATCH' });
    await e.update(guid, { feedUrl: 'https://refused.example/feed.xml' });
    await settle(e);
    const [refused] = await e.failed();
    expect(refused).toMatchObject({ guid, change: { feedUrl: 'https://refused.example/feed.xml' } });
    // Later changes to the same subscription go out while the refused one waits in failed().
    await e.update(guid, { isSubscribed: false });
    model.localUpdate(model.byHandle(guid)!, { isSubscribed: false });
    await settle(e);
    expect(s.entry(guid)?.is_subscribed).toBe(false);
    expect(requests(s, 'PATCH').at(-1)?.body).toEqual({ is_subscribed: false });
    expect(await e.failed()).toHaveLength(1);
    await e.retry(refused!.id);
    model.retried(model.byHandle(guid)!, refused!);
    await settle(e);
    expect(s.entry(guid)).toMatchObject({ feed_url: 'https://refused.example/feed.xml', is_subscribed: false });
    await checkInvariants({ engine: e, server: s, model });
  });
});
