// The worker side of the page client: a comlink.expose over the engine.
import { expose } from 'comlink';
import { SyncError } from '../src/errors.ts';
import type { EventSink, WorkerApi, WorkerStartOptions } from '../src/protocol.ts';
import { installErrorTransfer } from '../src/transfer.ts';
import { createSyncEngine, type SyncEngine } from './engine.ts';

/**
 * Serve the engine to a page's `createSyncClient` over comlink, from a worker of your own
 * (`createSyncClient({ ..., worker: new Worker(new URL('./my-worker.ts', import.meta.url), { type: 'module' }) })`).
 */
export function exposeSyncEngine(endpoint: Parameters<typeof expose>[1] = globalThis as Parameters<typeof expose>[1]): void {
  installErrorTransfer();
  let engine: SyncEngine | undefined;
  const current = (): SyncEngine => {
    if (!engine) throw new SyncError('closed', 'the worker was not started');
    return engine;
  };
  const api: WorkerApi = {
    async start(options: WorkerStartOptions, sink: EventSink) {
      if (engine) throw new SyncError('invalid', 'the worker is already started');
      engine = createSyncEngine(options);
      // The sink is a comlink proxy: its calls are messages; a closed page must not crash the worker.
      engine.on('change', (payload) => void Promise.resolve(sink('change', payload)).catch(() => undefined));
      engine.on('status', (payload) => void Promise.resolve(sink('status', payload)).catch(() => undefined));
    },
    setOnline: async (online) => current().setOnline(online),
    setVisible: async (visible) => current().setVisible(visible),
    sync: () => current().sync(),
    subscriptions: (filter) => current().subscriptions(filter),
    subscription: (guid) => current().subscription(guid),
    add: (feedUrl, opts) => current().add(feedUrl, opts),
    update: (guid, change) => current().update(guid, change),
    remove: (guid) => current().remove(guid),
    deletion: (id) => current().deletion(id),
    pending: () => current().pending(),
    failed: () => current().failed(),
    retry: (id) => current().retry(id),
    discard: (id) => current().discard(id),
    status: () => current().status(),
    setProgress: (ref, progress) => current().setProgress(ref, progress),
    markPlayed: (ref, played) => current().markPlayed(ref, played),
    episode: (ref) => current().episode(ref),
    episodes: (filter) => current().episodes(filter),
    setAuth: (auth) => current().setAuth(auth),
    clear: () => current().clear(),
    close: async () => {
      await engine?.close();
    },
  };
  expose(api, endpoint);
}
