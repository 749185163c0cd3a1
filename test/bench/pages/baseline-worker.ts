// The baseline the engine is compared with: what the simplest correct-enough sync would do. Fetch every
// page with the same page size and the same request options as the engine, one `bulkPut` per page into a
// plain Dexie table keyed by guid, no validation, no merge, no cursor, no events.
import { Dexie, type EntityTable } from 'dexie';
import type { BaselineArgs, BaselineMessage } from './api.ts';

Dexie.debug = false;

interface Row {
  guid: string;
  feed_url: string;
  is_subscribed: boolean;
}

interface Page {
  total: number;
  per_page: number;
  subscriptions: Row[];
}

async function run(args: BaselineArgs): Promise<BaselineMessage> {
  const db = new Dexie(args.dbName) as Dexie & { subscriptions: EntityTable<Row, 'guid'> };
  db.version(1).stores({ subscriptions: 'guid' });
  const base = args.baseUrl.replace(/\/+$/, '');
  let requests = 0;
  let entries = 0;
  const fetchPage = async (n: number): Promise<Page> => {
    requests++;
    const response = await fetch(`${base}/subscriptions?page=${n}&per_page=${args.pageSize}`, {
      headers: { Accept: 'application/json', Authorization: `Bearer ${args.token}` },
      credentials: 'omit',
      cache: 'no-store',
    });
    if (!response.ok) throw new Error(`page ${n}: HTTP ${response.status}`);
    return (await response.json()) as Page;
  };
  try {
    let n = 1;
    let next: Promise<Page> | undefined = fetchPage(n);
    while (next) {
      const page: Page = await next;
      next = undefined;
      const size = Math.min(args.pageSize, page.per_page || args.pageSize);
      const more = page.subscriptions.length >= size && n * size < page.total;
      if (more && args.prefetch) next = fetchPage(n + 1);
      if (page.subscriptions.length) await db.subscriptions.bulkPut(page.subscriptions);
      entries += page.subscriptions.length;
      if (more && !next) next = fetchPage(n + 1);
      n++;
    }
    return { type: 'done', requests, entries };
  } finally {
    db.close();
  }
}

self.onmessage = (event: MessageEvent<BaselineArgs>) => {
  run(event.data).then(
    (message) => self.postMessage(message),
    (error: unknown) => self.postMessage({ type: 'error', message: error instanceof Error ? error.message : String(error) } satisfies BaselineMessage),
  );
};
