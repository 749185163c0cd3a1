/**
 * The page side: `createSyncClient` runs the sync engine in a Web Worker and reaches it over comlink.
 * @packageDocumentation
 * @module opa-sync
 */
export { createSyncClient } from './client.ts';
export type { SyncClient } from './client.ts';
export { SyncError, isSyncError } from './errors.ts';
export type { SyncErrorCode, SyncErrorInit } from './errors.ts';
export { openSyncDatabase } from './schema.ts';
export { defaultDbName } from './base-url.ts';
export type { SyncDatabase } from './schema.ts';
export type { StoredSubscription, ServerBase, StoredChange, OutboxState, Handout, StoredEpisode, PendingEpisode, StoredAlias, StoredMeta } from './stored.ts';
export type * from './types.ts';
