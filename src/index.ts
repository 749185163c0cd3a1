/**
 * The page side: `createSyncClient` runs the sync engine in a Web Worker and reaches it over comlink.
 * @packageDocumentation
 * @module opa-sync
 */
export { createSyncClient } from './client.ts';
export type { SyncClient } from './client.ts';
export { SyncError, isSyncError } from './errors.ts';
export type { SyncErrorCode } from './errors.ts';
export { openSyncDatabase, defaultDbName } from './schema.ts';
export type { SyncDatabase, StoredSubscription, ServerBase, StoredChange } from './schema.ts';
export type * from './types.ts';
