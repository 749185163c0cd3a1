// The platform's limits for `update()` until durable, in a plain dedicated worker (no Dexie, no comlink), each
// message answered on the transaction's `complete` (default durability, as the engine's):
// - `row`: one raw IndexedDB `put` in a `readwrite` transaction, with no reads before the write;
// - `edit`: the least a queued edit must do, as the design's rules ask (changes to one subscription coalesce,
//   and the store's owner is checked inside the transaction that writes): in one `readwrite` transaction, read
//   the row, its queued changes and the owner together, then write the row and one queue entry (the queued one
//   replaced, or a new one). Two round trips inside IndexedDB where `row` has one.
import type { RawWriteMessage } from './api.ts';

let db: Promise<IDBDatabase> | undefined;

function open(name: string): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(name, 2);
    req.onupgradeneeded = () => {
      const d = req.result;
      for (const name of [...d.objectStoreNames]) d.deleteObjectStore(name);
      d.createObjectStore('rows', { keyPath: 'guid' });
      d.createObjectStore('queue', { keyPath: 'id', autoIncrement: true }).createIndex('guid', 'guid');
      d.createObjectStore('meta').put({ server: 'bench' }, 'owner');
    };
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

const asked = <T>(req: IDBRequest<T>) => new Promise<T>((resolve) => (req.onsuccess = () => resolve(req.result)));

self.onmessage = async (e: MessageEvent<RawWriteMessage>) => {
  const m = e.data;
  if (m.type === 'open') {
    db = open(m.dbName);
    await db;
    self.postMessage('ok');
    return;
  }
  const tx = (await db!).transaction(m.type === 'row' ? ['rows'] : ['rows', 'queue', 'meta'], 'readwrite');
  tx.oncomplete = () => self.postMessage('ok');
  tx.onerror = tx.onabort = () => self.postMessage(`error: ${String(tx.error ?? 'aborted: no owner')}`);
  const rows = tx.objectStore('rows');
  if (m.type === 'row') {
    rows.put(m.row);
    return;
  }
  const queue = tx.objectStore('queue');
  const [owner, , queued] = await Promise.all([
    asked(tx.objectStore('meta').get('owner')),
    asked(rows.get(m.row.guid)),
    asked(queue.index('guid').getAll(m.row.guid) as IDBRequest<{ id: number }[]>),
  ]);
  if (!owner) return tx.abort();
  rows.put(m.row);
  queue.put({ ...(queued[0] && { id: queued[0].id }), guid: m.row.guid, kind: 'update', change: { isSubscribed: m.row.isSubscribed }, at: m.row.at });
};
