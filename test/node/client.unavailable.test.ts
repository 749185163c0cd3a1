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
