// The browser suite's test page: the real client (which spawns the real module worker) as an app would use it.
// Options come from the URL, so a reload starts the same client on the same database.
import { Dexie, liveQuery } from 'dexie';
import { SyncError, createSyncClient, isSyncError, openSyncDatabase } from 'opa-sync';
import type { PageApi, PageOptions } from '../support/page-api.ts';

// The page's own Dexie (used for liveQuery) would turn on its slow debug mode on 127.0.0.1.
Dexie.debug = false;

const raw = new URLSearchParams(location.search).get('options');
if (!raw) throw new Error('the test page needs ?options=<json>');
const options = JSON.parse(raw) as PageOptions;
const client = createSyncClient(options);
const api: PageApi = {
  client,
  options,
  events: { change: [], status: [] },
  lib: { SyncError, isSyncError, openSyncDatabase, liveQuery, Dexie },
  scratch: {},
};
client.on('change', (event) => void api.events.change.push(event));
client.on('status', (status) => void api.events.status.push(status));
window.opa = api;
document.getElementById('state')!.textContent = 'ready';
