// An app as an offline reload must boot it: its built files served by its service worker (sw.ts), the library's
// store rendered as a list. Options come from the URL, so a reload starts the same client on the same database.
import { createSyncClient, type ClientOptions } from 'opa-sync';

const options = JSON.parse(new URLSearchParams(location.search).get('options') ?? '{}') as ClientOptions;
const client = createSyncClient(options);
const store = client.store();
const list = document.getElementById('list')!;
store.subscribe((snap) => {
  if (!snap.ready) return;
  list.replaceChildren(...snap.subscriptions.map((s) => Object.assign(document.createElement('li'), { textContent: s.feedUrl })));
});
Object.assign(window, { app: { client, store } });
document.getElementById('state')!.textContent = 'ready';
