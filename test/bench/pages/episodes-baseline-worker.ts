// The baseline a first sync of listening state is compared with: the simplest correct-enough client of a gPodder
// server (mygpo). Fetch the device's subscription list and every page of episode actions the engine fetches
// (`since` from 1, the next page from the last one's `timestamp`), one `bulkPut` per answer into plain Dexie
// tables (the actions keyed by episode URL, so the last one put per episode wins); no validation, no merge,
// no cursor, no events.
import { Dexie, type EntityTable } from 'dexie';
import type { BaselineEpisodesMessage, PullArgs } from './api.ts';

Dexie.debug = false;

/** mygpo's page: a full one means more may follow. */
const PAGE = 1000;

interface Action {
  podcast: string;
  episode: string;
  action: string;
  timestamp: string;
  position?: number | null;
  total?: number | null;
}

type Db = Dexie & { feeds: EntityTable<{ url: string }, 'url'>; episodes: EntityTable<Action, 'episode'> };

async function run(args: PullArgs): Promise<BaselineEpisodesMessage> {
  if (!args.gpodder) throw new Error('the episodes baseline needs a gPodder account');
  const { username, device } = args.gpodder;
  const db = new Dexie(args.dbName) as Db;
  db.version(1).stores({ feeds: 'url', episodes: 'episode' });
  const base = args.baseUrl.replace(/\/+$/, '');
  const headers = { Accept: 'application/json', Authorization: `Basic ${btoa(`${username}:${args.token}`)}` };
  let requests = 0;
  const get = async <T>(path: string): Promise<T> => {
    requests++;
    const response = await fetch(`${base}${path}`, { headers, credentials: 'omit', cache: 'no-store' });
    if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
    return (await response.json()) as T;
  };
  try {
    const list = await get<{ add: string[] }>(`/api/2/subscriptions/${encodeURIComponent(username)}/${encodeURIComponent(device)}.json?since=0`);
    await db.feeds.bulkPut(list.add.map((url) => ({ url })));
    let actions = 0;
    let since = 1;
    for (;;) {
      const page = await get<{ actions: Action[]; timestamp: number }>(`/api/2/episodes/${encodeURIComponent(username)}.json?since=${since}`);
      if (page.actions.length) await db.episodes.bulkPut(page.actions);
      actions += page.actions.length;
      if (page.actions.length < PAGE) break;
      since = page.timestamp > since ? page.timestamp : since + 1;
    }
    return { type: 'done', requests, actions };
  } finally {
    db.close();
  }
}

self.onmessage = (event: MessageEvent<PullArgs>) => {
  run(event.data).then(
    (message) => self.postMessage(message),
    (error: unknown) => self.postMessage({ type: 'error', message: error instanceof Error ? error.message : String(error) } satisfies BaselineEpisodesMessage),
  );
};
