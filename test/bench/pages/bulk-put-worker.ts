// The import's baselines, in a plain dedicated worker that answers each message once its transaction committed:
// - `put`: the feed URLs it is sent written as rows with one Dexie `bulkPut` into a plain table. No parsing, no
//   validation, no queue, no events: what the simplest correct-enough bulk add costs the platform.
// - `import`: the least a queued bulk add must do, as the design's rules ask (a queued change for each, and
//   nothing written over a row already there): in one transaction, read the keys the rows land on, then write
//   the rows and one queue entry each.
import { Dexie, type EntityTable } from 'dexie';
import type { BulkPutMessage } from './api.ts';

Dexie.debug = false;

interface Row {
  guid: string;
  feedUrl: string;
  isSubscribed: boolean;
}

interface Queued {
  id?: number;
  guid: string;
  kind: 'add';
  feedUrl: string;
}

type Db = Dexie & { subscriptions: EntityTable<Row, 'guid'>; queue: EntityTable<Queued, 'id'> };
let db: Db | undefined;

self.onmessage = async (e: MessageEvent<BulkPutMessage>) => {
  const m = e.data;
  try {
    if (m.type === 'open') {
      db = new Dexie(m.dbName) as Db;
      db.version(1).stores({ subscriptions: 'guid', queue: '++id' });
      await db.open();
    } else {
      const rows = m.urls.map((feedUrl, i) => ({ guid: `${m.prefix}-${i}`, feedUrl, isSubscribed: true }));
      if (m.type === 'put') await db!.subscriptions.bulkPut(rows);
      else {
        const d = db!;
        await d.transaction('rw', [d.subscriptions, d.queue], async () => {
          const there = await d.subscriptions.bulkGet(rows.map((r) => r.guid));
          const fresh = rows.filter((_, i) => !there[i]);
          await d.subscriptions.bulkAdd(fresh);
          await d.queue.bulkAdd(fresh.map(({ guid, feedUrl }) => ({ guid, kind: 'add' as const, feedUrl })));
        });
      }
    }
    self.postMessage('ok');
  } catch (error) {
    self.postMessage(`error: ${error instanceof Error ? error.message : String(error)}`);
  }
};
