// The platform's limit for `update()` until durable: a plain dedicated worker that, per message, does one raw
// IndexedDB `put` in a `readwrite` transaction (default durability, as the engine's) and answers on `complete`.
// No Dexie, no comlink, no reads before the write.
import type { RawWriteMessage } from './api.ts';

let db: Promise<IDBDatabase> | undefined;

function open(name: string): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(name, 1);
    req.onupgradeneeded = () => req.result.createObjectStore('rows', { keyPath: 'guid' });
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

self.onmessage = async (e: MessageEvent<RawWriteMessage>) => {
  const m = e.data;
  if (m.type === 'open') {
    db = open(m.dbName);
    await db;
    self.postMessage('ok');
    return;
  }
  const tx = (await db!).transaction('rows', 'readwrite');
  tx.objectStore('rows').put(m.row);
  tx.oncomplete = () => self.postMessage('ok');
  tx.onerror = () => self.postMessage(`error: ${String(tx.error)}`);
};
