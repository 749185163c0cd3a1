// Type-checked (not run) by package.test.ts against the installed package: the `types` conditions must lead
// to real declarations for both entries, under bundler and node16 resolution. The checks run with
// skipLibCheck (as apps do), so each @ts-expect-error below is a probe: were a declaration to resolve to
// `any`, its directive would be unused and tsc would fail.
import { SyncError, createSyncClient, isSyncError, openSyncDatabase, type Subscription, type SyncClient } from 'opa-sync';
import { createSyncEngine, type SyncEngine, type SyncReport, type SyncStatus } from 'opa-sync/worker';

const client: SyncClient = createSyncClient({ baseUrl: 'https://example.com/v1', auth: { type: 'bearer', token: 't' } });
const engine: SyncEngine = createSyncEngine({ baseUrl: 'https://example.com/v1', pullInterval: 0 });
const list: Promise<Subscription[]> = client.subscriptions({ subscribed: true });
const report: Promise<SyncReport> = engine.sync();
const db = openSyncDatabase('x');
const error: SyncError = new SyncError('offline', 'no network', { status: 503 });
const code: string = error.code;

// src/client + src/types: the client's options and methods.
// @ts-expect-error baseUrl is required
createSyncClient({});
// @ts-expect-error feedUrl is a string
void client.update('guid', { feedUrl: 42 });
// @ts-expect-error Subscription has required fields
const partial: Subscription = { guid: 'g' };
// @ts-expect-error the listener of 'status' gets a SyncStatus
client.on('status', (s: SyncReport) => s);
// worker/engine: the in-process engine.
// @ts-expect-error isSubscribed is a boolean
void engine.update('guid', { isSubscribed: 'yes' });
// @ts-expect-error not a phase
const phase: SyncStatus['phase'] = 'sleeping';
// src/errors.
// @ts-expect-error not an error code
new SyncError('nope', 'x');
// src/schema with Dexie's types behind it.
// @ts-expect-error guid is a string
void db.subscriptions.put({ guid: 1, feedUrl: 'https://a.example/f', isSubscribed: true, pending: 0 });

export { list, report, db, code, partial, phase, isSyncError };
