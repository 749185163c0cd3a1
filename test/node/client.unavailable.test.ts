// A worker that never loads (its file not served, a Content-Security-Policy): the client's status says so, with
// a phase and an `unsupported` error, instead of claiming "online" while every call rejects (issue 25). The
// browser suite loads a missing worker file for real (test/browser/errors.test.ts).
import { describe, expect, it, vi } from 'vitest';
import { createSyncClient } from '../../src/index.ts';
import type { SyncStatus } from '../../src/types.ts';

/** A Worker that never answers and fires `error` when told (as a module worker whose file 404s does). */
function deadWorker() {
  const target = new EventTarget();
  return Object.assign(target, { postMessage() {}, terminate() {}, fail: () => target.dispatchEvent(new Event('error')) }) as unknown as Worker & { fail(): void };
}

describe('a worker that failed to load', () => {
  it('status() resolves with phase unavailable and lastError unsupported; a status event and the store say so; other calls reject', async () => {
    const worker = deadWorker();
    const client = createSyncClient({ baseUrl: 'http://127.0.0.1:9/v1', dbName: 'never-opened', worker });
    const events: SyncStatus[] = [];
    client.on('status', (s) => events.push(s));
    const store = client.store();
    expect(store.getSnapshot().status.phase).toBe('starting');
    worker.fail();
    const status = await client.status();
    expect(status).toMatchObject({ phase: 'unavailable', online: false, leader: false, lastError: { code: 'unsupported' } });
    expect(status.network).not.toBe('online');
    expect(status.lastError!.message).toContain('failed to load');
    expect(events).toEqual([status]);
    await expect(client.subscriptions()).rejects.toMatchObject({ code: 'unsupported' });
    await vi.waitFor(() => expect(store.getSnapshot()).toMatchObject({ ready: false, error: { code: 'unsupported' }, status: { phase: 'unavailable' } }));
    await client.close();
    await expect(client.status()).rejects.toMatchObject({ code: 'closed' });
  });
});

describe('a worker that loaded', () => {
  it('an error it throws later is not a failure to load: no unavailable status', async () => {
    const { MessageChannel } = await import('node:worker_threads');
    const { exposeSyncEngine } = await import('../../worker/index.ts');
    const { port1, port2 } = new MessageChannel();
    exposeSyncEngine(port1 as never);
    const target = new EventTarget();
    port2.on('message', (data: unknown) => target.dispatchEvent(new MessageEvent('message', { data })));
    const worker = Object.assign(target, {
      postMessage: (message: unknown, transfer?: Transferable[]) => port2.postMessage(message, transfer as never),
      terminate: () => (port2.close(), port1.close()),
      start: () => port2.start(),
    }) as unknown as Worker;
    const client = createSyncClient({ baseUrl: 'http://127.0.0.1:9/v1', dbName: `loaded-${Math.random()}`, pullInterval: 0, worker });
    const events: SyncStatus[] = [];
    client.on('status', (s) => events.push(s));
    await client.subscriptions();
    target.dispatchEvent(new Event('error'));
    const status = await client.status();
    expect(status.phase).not.toBe('unavailable');
    expect(events.some((s) => s.phase === 'unavailable')).toBe(false);
    await client.close();
  });
});
