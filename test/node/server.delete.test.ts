import { describe, expect, it } from 'vitest';
import { createApi } from '../server/client.ts';
import { serverPerFile } from './server-fixture.ts';
import {
  startServer,
  type WireDeletionAccepted,
  type WireDeletionStatus,
  type WireSubscriptionPage,
} from '../server/server.ts';

const ctx = serverPerFile({ deletionDelayMs: 10 });

const status = (id: number) => ctx.api<WireDeletionStatus>('GET', `/deletions/${id}`);
async function settled(id: number): Promise<WireDeletionStatus> {
  for (let i = 0; i < 200; i++) {
    const res = await status(id);
    if (res.body.status !== 'PENDING') return res.body;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`deletion ${id} never settled`);
}

describe('DELETE /subscriptions/{guid}', () => {
  it('answers 202 at once, stays PENDING for the delay, then SUCCESS with a tombstone', async () => {
    ctx.server.setDeletionDelay(300);
    const a = ctx.server.foreign.add('https://a.example/feed.xml', 'ga');
    const res = await ctx.api<WireDeletionAccepted>('DELETE', '/subscriptions/ga');
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ deletion_id: expect.any(Number), message: 'Deletion is pending' });
    expect(Number.isInteger(res.body.deletion_id)).toBe(true);
    const id = res.body.deletion_id;

    expect((await status(id)).body).toEqual({ deletion_id: id, status: 'PENDING', message: 'Deletion is pending' });
    expect(ctx.server.entry('ga')?.deleted).toBeUndefined();

    expect(await settled(id)).toEqual({ deletion_id: id, status: 'SUCCESS', message: 'Subscription deleted successfully' });
    const tomb = ctx.server.entry('ga')!;
    expect(tomb.deleted).toEqual(expect.any(String));
    expect(tomb).toMatchObject({ is_subscribed: false, subscription_changed: tomb.deleted });

    expect((await ctx.api('GET', '/subscriptions/ga')).status).toBe(410);
    expect((await ctx.api('GET', '/subscriptions/ga')).body).toEqual({ code: 410, message: 'Subscription has been deleted' });
    expect((await ctx.api('DELETE', '/subscriptions/ga')).status).toBe(410);
    const changes = await ctx.api<WireSubscriptionPage>('GET', `/subscriptions?since=${encodeURIComponent(a.subscription_changed!)}`);
    expect(changes.body.subscriptions).toEqual([
      { feed_url: a.feed_url, guid: 'ga', is_subscribed: false, subscription_changed: tomb.deleted, deleted: tomb.deleted },
    ]);
    expect((await ctx.api<WireSubscriptionPage>('GET', '/subscriptions')).body.total).toBe(0);
  });

  it('rolls back on FAILURE: the entry is unchanged, and the next job succeeds again', async () => {
    const a = ctx.server.foreign.add('https://a.example/feed.xml', 'ga');
    ctx.server.foreign.add('https://b.example/feed.xml', 'gb');
    ctx.server.deletionOutcome('failure', 1);
    const first = await ctx.api<WireDeletionAccepted>('DELETE', '/subscriptions/ga');
    expect(await settled(first.body.deletion_id)).toEqual({
      deletion_id: first.body.deletion_id,
      status: 'FAILURE',
      message: 'The deletion process encountered an error and was rolled back',
    });
    expect(ctx.server.entry('ga')).toEqual(a);
    expect((await ctx.api('GET', '/subscriptions/ga')).status).toBe(200);

    const second = await ctx.api<WireDeletionAccepted>('DELETE', '/subscriptions/gb');
    expect(second.body.deletion_id).toBeGreaterThan(first.body.deletion_id);
    expect((await settled(second.body.deletion_id)).status).toBe('SUCCESS');
  });

  it('keeps failing every later job until told otherwise when no count is given', async () => {
    ctx.server.seed(2);
    ctx.server.deletionOutcome('failure');
    const ids: number[] = [];
    for (const s of ctx.server.state()) ids.push((await ctx.api<WireDeletionAccepted>('DELETE', `/subscriptions/${s.guid}`)).body.deletion_id);
    for (const id of ids) expect((await settled(id)).status).toBe('FAILURE');
  });

  it('answers the same job for a repeated DELETE while it is pending', async () => {
    ctx.server.setDeletionDelay(300);
    ctx.server.foreign.add('https://a.example/feed.xml', 'ga');
    const one = await ctx.api<WireDeletionAccepted>('DELETE', '/subscriptions/ga');
    const two = await ctx.api<WireDeletionAccepted>('DELETE', '/subscriptions/ga');
    expect(two.body.deletion_id).toBe(one.body.deletion_id);
  });

  it('deletes the newest entry when addressed by an old guid', async () => {
    ctx.server.foreign.add('https://a.example/feed.xml', 'g1');
    ctx.server.foreign.patch('g1', { new_guid: 'g2' });
    const res = await ctx.api<WireDeletionAccepted>('DELETE', '/subscriptions/g1');
    await settled(res.body.deletion_id);
    expect(ctx.server.entry('g2')?.deleted).toEqual(expect.any(String));
  });

  it('answers 404 for an unknown guid', async () => {
    const res = await ctx.api('DELETE', '/subscriptions/nobody');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 404, message: 'Resource not found' });
  });

  it('answers 201 when configured like that server', async () => {
    const other = await startServer({ port: 0, deleteStatus: 201 });
    try {
      other.foreign.add('https://a.example/feed.xml', 'ga');
      const res = await createApi(other.url)<WireDeletionAccepted>('DELETE', '/subscriptions/ga');
      expect(res.status).toBe(201);
      expect(res.body.message).toBe('Deletion is pending');
    } finally {
      await other.close();
    }
  });
});

describe('GET /deletions/{id}', () => {
  it('answers 404 for an id never issued, 405 for one that is not an integer', async () => {
    for (const id of ['999', '0', '-3']) {
      const res = await ctx.api('GET', `/deletions/${id}`);
      expect(res.status, id).toBe(404);
      expect(res.body).toEqual({ code: 404, message: 'Resource not found' });
    }
    for (const id of ['abc', '1.5', '1e3', '%20']) {
      const res = await ctx.api('GET', `/deletions/${id}`);
      expect(res.status, id).toBe(405);
      expect(res.body).toEqual({ code: 405, message: 'Input could not be validated' });
    }
  });

  it('forgets jobs on reset but never reuses their ids', async () => {
    ctx.server.foreign.add('https://a.example/feed.xml', 'ga');
    const before = (await ctx.api<WireDeletionAccepted>('DELETE', '/subscriptions/ga')).body.deletion_id;
    ctx.server.reset();
    expect((await status(before)).status).toBe(404);
    ctx.server.foreign.add('https://a.example/feed.xml', 'ga');
    const after = (await ctx.api<WireDeletionAccepted>('DELETE', '/subscriptions/ga')).body.deletion_id;
    expect(after).toBeGreaterThan(before);
  });
});
