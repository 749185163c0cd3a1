/**
 * The sync engine in-process: in a worker of your own, a service worker, or Node with fake-indexeddb.
 * @packageDocumentation
 * @module opa-sync/worker
 */
export { createSyncEngine } from './engine.ts';
export type { SyncEngine } from './engine/sync-engine.ts';
export { exposeSyncEngine } from './expose.ts';
export { SyncError, isSyncError } from '../src/errors.ts';
export type { SyncErrorCode, SyncErrorInit } from '../src/errors.ts';
export type { LastChanceRequest } from '../src/protocol.ts';
export type * from '../src/types.ts';
