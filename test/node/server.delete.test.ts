import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApi, type ApiCall } from '../server/client.ts';
import {
  startServer,
  type RefServer,
  type WireDeletionAccepted,
  type WireDeletionStatus,
  type WireSubscriptionPage,
} from '../server/server.ts';

let server: RefServer;
let api: ApiCall;
beforeAll(async () => {
  server = await startServer({ port: 0, deletionDelayMs: 10 });
  api = createApi(server.url);
});
afterAll(() => server.close());
beforeEach(() => server.reset());

const status = (id: number) => api<WireDeletionStatus>('GET', `/deletions/${id}`);
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
    server.setDeletionDelay(300);
    const a = server.foreign.add('https://a.example/feed.xml', 'ga');
    const res = await api<WireDeletionAccepted>('DELETE', '/subscriptions/ga');
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ deletion_id: expect.any(Number), message: 'Deletion is pending' });
    expect(Number.isInteger(res.body.deletion_id)).toBe(true);
    const id = res.body.deletion_id;

    expect((await status(id)).body).toEqual({ deletion_id: id, status: 'PENDING', message: 'Deletion is pending' });
    expect(server.entry('ga')?.deleted).toBeUndefined();

    expect(await settled(id)).toEqual({ deletion_id: id, status: 'SUCCESS', message: 'Subscription deleted successfully' });
    const tomb = server.entry('ga')!;
    expect(tomb.deleted).toEqual(expect.any(String));
    expect(tomb).toMatchObject({ is_subscribed: false, subscription_changed: tomb.deleted });

    expect((await api('GET', '/subscriptions/ga')).status).toBe(410);
    expect((await api('GET', '/subscriptions/ga')).body).toEqual({ code: 410, message: 'Subscription has been deleted' });
    expect((await api('DELETE', '/subscriptions/ga')).status).toBe(410);
    const changes = await api<WireSubscriptionPage>('GET', `/subscriptions?since=${encodeURIComponent(a.subscription_changed!)}`);
    expect(changes.body.subscriptions).toEqual([
      { feed_url: a.feed_url, guid: 'ga', is_subscribed: false, subscription_changed: tomb.deleted, deleted: tomb.deleted },
    ]);
    expect((await api<WireSubscriptionPage>('GET', '/subscriptions')).body.total).toBe(0);
  });

  it('rolls back on FAILURE: the entry is unchanged, and the next job succeeds again', async () => {
    const a = server.foreign.add('https://a.example/feed.xml', 'ga');
    server.foreign.add('https://b.example/feed.xml', 'gb');
    server.deletionOutcome('failure', 1);
    const first = await api<WireDeletionAccepted>('DELETE', '/subscriptions/ga');
    expect(await settled(first.body.deletion_id)).toEqual({
      deletion_id: first.body.deletion_id,
      status: 'FAILURE',
      message: 'The deletion process encountered an error and was rolled back',
    });
    expect(server.entry('ga')).toEqual(a);
    expect((await api('GET', '/subscriptions/ga')).status).toBe(200);

    const second = await api<WireDeletionAccepted>('DELETE', '/subscriptions/gb');
    expect(second.body.deletion_id).toBeGreaterThan(first.body.deletion_id);
    expect((await settled(second.body.deletion_id)).status).toBe('SUCCESS');
  });

  it('keeps failing every later job until told otherwise when no count is given', async () => {
    server.seed(2);
    server.deletionOutcome('failure');
    const ids: number[] = [];
    for (const s of server.state()) ids.push((await api<WireDeletionAccepted>('DELETE', `/subscriptions/${s.guid}`)).body.deletion_id);
    for (const id of ids) expect((await settled(id)).status).toBe('FAILURE');
  });

  it('answers the same job for a repeated DELETE while it is pending', async () => {
    server.setDeletionDelay(300);
    server.foreign.add('https://a.example/feed.xml', 'ga');
    const one = await api<WireDeletionAccepted>('DELETE', '/subscriptions/ga');
    const two = await api<WireDeletionAccepted>('DELETE', '/subscriptions/ga');
    expect(two.body.deletion_id).toBe(one.body.deletion_id);
  });

  it('deletes the newest entry when addressed by an old guid', async () => {
    server.foreign.add('https://a.example/feed.xml', 'g1');
    server.foreign.patch('g1', { new_guid: 'g2' });
    const res = await api<WireDeletionAccepted>('DELETE', '/subscriptions/g1');
    await settled(res.body.deletion_id);
    expect(server.entry('g2')?.deleted).toEqual(expect.any(String));
  });

  it('answers 404 for an unknown guid', async () => {
    const res = await api('DELETE', '/subscriptions/nobody');
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
      const res = await api('GET', `/deletions/${id}`);
      expect(res.status, id).toBe(404);
      expect(res.body).toEqual({ code: 404, message: 'Resource not found' });
    }
    for (const id of ['abc', '1.5', '1e3', '%20']) {
      const res = await api('GET', `/deletions/${id}`);
      expect(res.status, id).toBe(405);
      expect(res.body).toEqual({ code: 405, message: 'Input could not be validated' });
    }
  });

  it('forgets jobs on reset but never reuses their ids', async () => {
    server.foreign.add('https://a.example/feed.xml', 'ga');
    const before = (await api<WireDeletionAccepted>('DELETE', '/subscriptions/ga')).body.deletion_id;
    server.reset();
    expect((await status(before)).status).toBe(404);
    server.foreign.add('https://a.example/feed.xml', 'ga');
    const after = (await api<WireDeletionAccepted>('DELETE', '/subscriptions/ga')).body.deletion_id;
    expect(after).toBeGreaterThan(before);
  });
});
