// The import's baseline: a plain dedicated worker that, per message, writes the feed URLs it is sent as rows
// with one Dexie `bulkPut` into a plain table and answers when it committed. No parsing, no validation, no
// queue, no events: what the simplest correct-enough bulk add costs the platform.
import { Dexie, type EntityTable } from 'dexie';
import type { BulkPutMessage } from './api.ts';

Dexie.debug = false;

interface Row {
  guid: string;
  feedUrl: string;
  isSubscribed: boolean;
}

let db: (Dexie & { subscriptions: EntityTable<Row, 'guid'> }) | undefined;

self.onmessage = async (e: MessageEvent<BulkPutMessage>) => {
  const m = e.data;
  try {
    if (m.type === 'open') {
      db = new Dexie(m.dbName) as Dexie & { subscriptions: EntityTable<Row, 'guid'> };
      db.version(1).stores({ subscriptions: 'guid' });
      await db.open();
    } else {
      await db!.subscriptions.bulkPut(m.urls.map((feedUrl, i) => ({ guid: `${m.prefix}-${i}`, feedUrl, isSubscribed: true })));
    }
    self.postMessage('ok');
  } catch (error) {
    self.postMessage(`error: ${error instanceof Error ? error.message : String(error)}`);
  }
};
