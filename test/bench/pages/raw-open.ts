// The platform's limit for a cold open: the page opens IndexedDB itself (the engine's database, as it is on
// disk), reads every subscription row with one `getAll` and renders them. No worker, no library.
import { showRows } from './rows.ts';

const dbName = new URLSearchParams(location.search).get('db')!;
const req = indexedDB.open(dbName);
req.onsuccess = () => {
  const db = req.result;
  const get = db.transaction('subscriptions').objectStore('subscriptions').getAll();
  get.onsuccess = () => {
    const rows = get.result as { url?: string; feedUrl?: string }[];
    const ms = showRows(rows.map((r) => r.url ?? r.feedUrl ?? ''));
    window.opened = { ms, rows: rows.length };
    db.close();
  };
};
