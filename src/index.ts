// opa-sync: the page side. The engine runs in a Web Worker; this is how the page reaches it.
export { createSyncClient } from './client.ts';
export type { SyncClient } from './client.ts';
export { SyncError, isSyncError } from './errors.ts';
export type { SyncErrorCode } from './errors.ts';
export { openSyncDatabase, defaultDbName } from './schema.ts';
export type { SyncDatabase, StoredSubscription, ServerBase, StoredChange } from './schema.ts';
export type * from './types.ts';
