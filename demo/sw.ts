// The demo's service worker: opa-sync/sw answering the Background Sync tag with every page closed. Credentials
// come from where the demo already keeps them (its remembered settings); each request the server accepted is
// noted for the next page load to log ("sent by the service worker").
import { get, set } from 'idb-keyval';
import type { Auth } from '../src/types.ts';
import { serveBackgroundSync } from '../worker/sw.ts';
import { SW_SENT_NOTE, type SwSentNote } from './background.ts';
import { loadSettings } from './settings.ts';

/** The demo's own credentials for the store's protocol. */
async function auth(): Promise<Auth | undefined> {
  const s = await loadSettings();
  return s.protocol === 'opa' ? { type: 'bearer', token: s.token } : { type: 'basic', username: s.username, password: s.password };
}

/** `fetch`, noting each accepted request that changes something. */
const noting: typeof fetch = async (input, init) => {
  const response = await fetch(input, init);
  if (response.ok && (init?.method ?? 'GET') !== 'GET') {
    const note = await get<SwSentNote>(SW_SENT_NOTE).catch(() => undefined);
    await set(SW_SENT_NOTE, { requests: (note?.requests ?? 0) + 1, at: Date.now() } satisfies SwSentNote).catch(() => undefined);
  }
  return response;
};

serveBackgroundSync({ auth, fetch: noting });
