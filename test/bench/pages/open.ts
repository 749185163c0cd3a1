// The library's cold open: a player page creates its client (the module worker, from the HTTP cache) and its
// store, and renders the subscriptions of the first `ready` snapshot (the local database's).
import { createSyncClient } from '../../../src/index.ts';
import { showRows } from './rows.ts';

const options = JSON.parse(new URLSearchParams(location.search).get('options')!) as Parameters<typeof createSyncClient>[0];
const client = createSyncClient(options);
const off = client.store().subscribe((snapshot) => {
  if (!snapshot.ready) return;
  const readyMs = performance.now();
  queueMicrotask(() => off());
  const ms = showRows(snapshot.subscriptions.map((s) => s.feedUrl));
  window.opened = { ms, rows: snapshot.subscriptions.length, readyMs };
});
