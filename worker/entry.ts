// The module worker the page client spawns: a thin comlink.expose over the engine.
import { expose } from 'comlink';
import { Dexie } from 'dexie';
import { SyncError } from '../src/errors.ts';
import type { EventSink, WorkerApi, WorkerStartOptions } from '../src/protocol.ts';
import { installErrorTransfer } from '../src/transfer.ts';
import { createSyncEngine, type SyncEngine } from './engine.ts';

installErrorTransfer();
// This bundle's own Dexie: its debug mode (on by default for localhost pages) only slows the engine down.
Dexie.debug = false;

let engine: SyncEngine | undefined;

function current(): SyncEngine {
  if (!engine) throw new SyncError('closed', 'the worker was not started');
  return engine;
}

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
  setAuth: (auth) => current().setAuth(auth),
  clear: () => current().clear(),
  close: async () => {
    await engine?.close();
  },
};

expose(api);
