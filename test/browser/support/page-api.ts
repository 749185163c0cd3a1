// What the test page (pages/main.ts) puts on `window`, so node-side tests can drive it with page.evaluate.
import type { Dexie, liveQuery } from 'dexie';
import type { ChangeEvent, ClientOptions, SyncClient, SyncError, SyncStatus, createSyncClient, isSyncError, openSyncDatabase } from '../../../src/index.ts';

/** Options the page reads from its `?options=` query parameter (JSON). */
export type PageOptions = Omit<ClientOptions, 'worker'>;

/** The page's handle for tests. */
export interface PageApi {
  client: SyncClient;
  options: PageOptions;
  /** Every event the client delivered, oldest first. */
  events: { change: ChangeEvent[]; status: SyncStatus[] };
  /** Uncaught errors of the page and of the client's worker since the tab opened (kept across reloads). */
  errors: string[];
  /** With a `?worker=` variant: the requests this tab's worker sent (`METHOD /path`), oldest first. */
  requests: string[];
  /** Whether the client's worker answers a message within `ms` (a terminated worker never does). */
  workerAnswers(ms: number): Promise<boolean>;
  /** The package's exports, as the page sees them. */
  lib: {
    SyncError: typeof SyncError;
    isSyncError: typeof isSyncError;
    openSyncDatabase: typeof openSyncDatabase;
    liveQuery: typeof liveQuery;
    Dexie: typeof Dexie;
    createSyncClient: typeof createSyncClient;
  };
  /** Scratch space for a test's own page-side state (liveQuery results and such). */
  scratch: Record<string, unknown>;
}

declare global {
  interface Window {
    opa: PageApi;
  }
}
