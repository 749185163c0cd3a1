// The browser suite's test page: the real client (which spawns the real module worker) as an app would use it.
// Options come from the URL, so a reload starts the same client on the same database.
import { Dexie, liveQuery } from 'dexie';
import { SyncError, createSyncClient, isSyncError, openSyncDatabase } from 'opa-sync';
import type { PageApi, PageOptions } from '../support/page-api.ts';
import { errors, recordErrors } from './errors.ts';

// The page's own Dexie (used for liveQuery) would turn on its slow debug mode on 127.0.0.1.
Dexie.debug = false;

const params = new URLSearchParams(location.search);
const raw = params.get('options');
if (!raw) throw new Error('the test page needs ?options=<json>');
const options = JSON.parse(raw) as PageOptions;
// ?worker=...: the package's worker entry with its requests reported to this page (tests attribute them), as it
// is or with platform features taken away. Each URL is spelled out for Vite to bundle it.
const variants: Record<string, () => Worker> = {
  logged: () => new Worker(new URL('./logged-worker.ts', import.meta.url), { type: 'module', name: 'opa-sync' }),
  'no-locks': () => new Worker(new URL('./no-locks-worker.ts', import.meta.url), { type: 'module', name: 'opa-sync' }),
  bare: () => new Worker(new URL('./bare-worker.ts', import.meta.url), { type: 'module', name: 'opa-sync' }),
};
const variant = params.get('worker');
const logged = variant !== null;
if (logged && !variants[variant]) throw new Error(`unknown worker variant ${variant}`);
const client = createSyncClient(logged ? { ...options, worker: variants[variant]!() } : options);
recordErrors(client.worker);
const requests: string[] = [];
if (logged) client.worker.addEventListener('message', (e: MessageEvent<{ opaFetch?: string }>) => void (e.data?.opaFetch && requests.push(e.data.opaFetch)));

let pings = 0;
const api: PageApi = {
  client,
  options,
  events: { change: [], status: [] },
  errors,
  requests,
  workerAnswers(ms) {
    // A comlink GET of a property that does not exist: a live worker answers at once with undefined.
    const id = `ping-${++pings}-${Math.random()}`;
    return new Promise((resolve) => {
      const onMessage = (e: MessageEvent<{ id?: string }>) => {
        if (e.data?.id !== id) return;
        client.worker.removeEventListener('message', onMessage);
        resolve(true);
      };
      client.worker.addEventListener('message', onMessage);
      client.worker.postMessage({ id, type: 'GET', path: ['__ping'] });
      setTimeout(() => {
        client.worker.removeEventListener('message', onMessage);
        resolve(false);
      }, ms);
    });
  },
  lib: { SyncError, isSyncError, openSyncDatabase, liveQuery, Dexie, createSyncClient },
  scratch: {},
};
client.on('change', (event) => void api.events.change.push(event));
client.on('status', (status) => void api.events.status.push(status));
window.opa = api;
document.getElementById('state')!.textContent = 'ready';
