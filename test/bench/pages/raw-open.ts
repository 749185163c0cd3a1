// The platform's limit for a cold open: the page opens IndexedDB itself (the engine's database, as it is on
// disk), reads every subscription row with one `getAll` and renders them. No worker, no library.
import { showRows } from './rows.ts';

const dbName = new URLSearchParams(location.search).get('db')!;
const stage = (s: string) => ((window as unknown as { openStage: string[] }).openStage ??= []).push(`${s}@${performance.now().toFixed(0)}`);
stage('script');
const req = indexedDB.open(dbName);
req.onblocked = () => stage('blocked');
req.onerror = () => stage(`error ${String(req.error)}`);
req.onupgradeneeded = () => stage('upgrade');
req.onsuccess = () => {
  stage('open');
  const db = req.result;
  const get = db.transaction('subscriptions').objectStore('subscriptions').getAll();
  get.onerror = () => stage(`get error ${String(get.error)}`);
  get.onsuccess = () => {
    stage('got');
    const rows = get.result as { url?: string; feedUrl?: string }[];
    const ms = showRows(rows.map((r) => r.url ?? r.feedUrl ?? ''));
    window.opened = { ms, rows: rows.length };
    db.close();
  };
};
