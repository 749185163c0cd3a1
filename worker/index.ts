// opa-sync/worker: the sync engine in-process (a worker, a service worker, or Node with fake-indexeddb).
export { createSyncEngine } from './engine.ts';
export type { SyncEngine } from './engine.ts';
export { exposeSyncEngine } from './expose.ts';
export { SyncError, isSyncError } from '../src/errors.ts';
export type { SyncErrorCode } from '../src/errors.ts';
export type * from '../src/types.ts';
