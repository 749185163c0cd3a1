// The page's half of background sync: when it registers the tag, and what the status says where it cannot.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createBackgroundSync } from '../../src/background-sync.ts';
import type { SyncStatus } from '../../src/types.ts';

const status = (over: Partial<SyncStatus> = {}): SyncStatus => ({
  phase: 'idle', online: true, network: 'online', leader: true, pending: 0, failed: 0, pendingEpisodes: 0, ...over,
});
const flush = () => new Promise((resolve) => setTimeout(resolve, 0));

/** A window with a service worker registration whose `sync.register` is `register`. */
function withBackgroundSync(register: (tag: string) => Promise<void>) {
  vi.stubGlobal('SyncManager', function SyncManager() {});
  vi.stubGlobal('navigator', { serviceWorker: { ready: Promise.resolve({ sync: { register } }) } });
}

afterEach(() => void vi.unstubAllGlobals());

describe('createBackgroundSync (page)', () => {
  it('registers the tag as soon as something waits, whatever the push (in flight, the server answering): a page closed mid-push is covered (issue 34)', async () => {
    const register = vi.fn(async (_tag: string) => undefined);
    withBackgroundSync(register);
    const bg = createBackgroundSync();
    expect(bg.state).toBe('ready');
    bg.onStatus(status({ pending: 0, network: 'unreachable', online: false }));
    await flush();
    expect(register).not.toHaveBeenCalled();
    // A change queued, its push in flight, the server answering so far: registered before any push failed.
    bg.onStatus(status({ pendingEpisodes: 1, phase: 'pushing' }));
    await flush();
    expect(register).toHaveBeenCalledWith('opa-sync');
    expect(bg.mark(status()).backgroundSync).toBe('registered');
    // While it keeps waiting on an answering server: one registration covers it.
    bg.onStatus(status({ pending: 1 }));
    await flush();
    expect(register).toHaveBeenCalledTimes(1);
    // A push that found no server registers again (the event may have ended meanwhile).
    bg.onStatus(status({ pendingEpisodes: 2, lastError: { code: 'server', message: '503' } }));
    await flush();
    expect(register).toHaveBeenCalledTimes(2);
  });

  it('the queue drained: the status no longer says registered (issue 34); the next change registers again', async () => {
    const register = vi.fn(async (_tag: string) => undefined);
    withBackgroundSync(register);
    const bg = createBackgroundSync();
    bg.onStatus(status({ pending: 1, network: 'unreachable', online: false }));
    await flush();
    expect(bg.mark(status()).backgroundSync).toBe('registered');
    expect(bg.mark(bg.onStatus(status({ pending: 0 }))).backgroundSync).toBe('ready');
    bg.onStatus(status({ pending: 1 }));
    await flush();
    expect(register).toHaveBeenCalledTimes(2);
    expect(bg.state).toBe('registered');
  });

  it('registers again when the page is hidden with something waiting (not when nothing waits)', async () => {
    const register = vi.fn(async (_tag: string) => undefined);
    withBackgroundSync(register);
    const bg = createBackgroundSync();
    bg.onStatus(status());
    bg.onHidden();
    await flush();
    expect(register).not.toHaveBeenCalled();
    bg.onStatus(status({ pending: 3 }));
    await flush();
    expect(register).toHaveBeenCalledTimes(1);
    // Hidden (perhaps closing) with it still waiting: registered again, in case the first event already ended.
    bg.onHidden();
    await flush();
    expect(register).toHaveBeenCalledTimes(2);
  });

  it('a refused registration says failed; without Background Sync it says unsupported and never throws', async () => {
    withBackgroundSync(async () => Promise.reject(new DOMException('no', 'InvalidAccessError')));
    const refused = createBackgroundSync();
    refused.onStatus(status({ pending: 1, network: 'offline', online: false }));
    await flush();
    await flush();
    expect(refused.state).toBe('failed');
    vi.unstubAllGlobals();
    vi.stubGlobal('navigator', {});
    const absent = createBackgroundSync();
    expect(() => absent.onStatus(status({ pending: 1, network: 'offline', online: false }))).not.toThrow();
    absent.onHidden();
    expect(absent.mark(status()).backgroundSync).toBe('unsupported');
  });
});
