// Where subscriptions' feed URLs moved: what a unit of work changed (its episodes follow, see
// episodes/move.ts), and where an old URL leads now (actions pulled under it are its new URL's).
import type { SyncDatabase } from '../../src/schema.ts';
import { MAX_HOPS, resolveLoaded, type WorksetState } from './workset-state.ts';

/**
 * The feed URLs this unit of work moved (old → new), by subscription: each row as read, followed through the
 * re-keys made since (a move under gPodder, where the guid is the URL; a refused move falling back), against
 * the view it has now. A URL another subscription still shows (and has not deleted) is not moved away from.
 */
export function feedMoves(st: WorksetState): Map<string, string> {
  const moves = new Map<string, string>();
  const kept = new Set<string>();
  for (const key of st.touched) {
    const before = st.original.get(key);
    if (!before?.feedUrl) continue;
    const now = st.rows.get(resolveLoaded(st, key));
    if (!now?.feedUrl) continue;
    if (now.feedUrl === before.feedUrl) {
      if (now.deleted === undefined) kept.add(now.feedUrl);
    } else if (!moves.has(before.feedUrl)) {
      moves.set(before.feedUrl, now.feedUrl);
    }
  }
  for (const url of kept) moves.delete(url);
  return moves;
}

/**
 * Where each of these feed URLs leads now, for those a subscription moved away from: the subscription keyed by
 * the URL (gPodder keys one by its URL), or the one an old URL aliases, shows another feed URL in its view (a
 * move made, or a queued move held behind a removal). Call inside a transaction over `aliases` and
 * `subscriptions`.
 */
export async function renamedFeeds(db: SyncDatabase, urls: readonly string[]): Promise<Map<string, string>> {
  const at = new Map(urls.map((url) => [url, url]));
  let open = [...urls];
  for (let hop = 0; open.length && hop < MAX_HOPS; hop++) {
    const found = await db.aliases.bulkGet(open.map((url) => at.get(url)!));
    open = open.filter((url, i) => {
      const to = found[i]?.to;
      if (to === undefined || to === url) return false;
      at.set(url, to);
      return true;
    });
  }
  const rows = await db.subscriptions.bulkGet(urls.map((url) => at.get(url)!));
  const out = new Map<string, string>();
  urls.forEach((url, i) => {
    const feedUrl = rows[i]?.feedUrl;
    if (feedUrl && feedUrl !== url) out.set(url, feedUrl);
  });
  return out;
}
