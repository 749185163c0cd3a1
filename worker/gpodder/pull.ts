// gPodder pull: one request for every change since the cursor (no paging in this protocol).
import type { Http } from '../http.ts';
import { formatTimestamp } from '../time.ts';
import type { PullSink, RemoteEntry } from '../transport.ts';
import { parseChanges, type WireChanges } from './wire.ts';

/**
 * Pull the changes since the sink's cursor (seconds on the wire, ms in the store), then since each of this
 * device's uploads after it (`marks`, seconds). mygpo answers with the net effect of the window's actions
 * (+1 per subscribe, -1 per unsubscribe): an upload of ours and another device's undoing of it inside one
 * window cancel out, and the undo would never be seen. A window that starts at our upload shows it. The
 * later windows' answers are applied last (they are the newer word on what they list).
 */
export async function pullGpodder(http: Http, path: string, sink: PullSink, marks: readonly number[] = []): Promise<boolean> {
  // The last answer's own `timestamp`, as the protocol says. No overlap: these servers answer with the net
  // effect since `since`, so re-asking a window that holds this device's own upload would net out another
  // device's undoing of it. (mygpo's `since` is exclusive with whole seconds: a change made in the second of
  // the last answer, after it, is not seen until it changes again. opodsync's is inclusive: no such gap.)
  const since = sink.cursor === undefined ? 0 : Math.floor(sink.cursor / 1000);
  const windows = [since, ...[...new Set(marks)].filter((m) => m > since).sort((a, b) => a - b)];
  const entries = new Map<string, RemoteEntry>();
  let cursor = sink.cursor ?? 0;
  for (const from of windows) {
    const changes = parseChanges((await http.request('GET', http.url(path, { since: from }))).body);
    collect(changes, entries);
    cursor = Math.max(cursor, changes.timestamp * 1000);
  }
  const committed = await sink.apply([...entries.values()], { cursor });
  sink.progress({ pages: windows.length, entries: entries.size });
  return committed;
}

/** Fold one answer into the entries (a later answer's word on a URL replaces an earlier one's). */
function collect(changes: WireChanges, entries: Map<string, RemoteEntry>): void {
  // The answer is the server's state at its `timestamp`: every entry is stamped with it.
  const at = changes.timestamp * 1000;
  const stamp = formatTimestamp(at);
  const put = (url: string, isSubscribed: boolean) =>
    entries.set(url, { guid: url, feedUrl: url, isSubscribed, subscriptionChanged: stamp, at, dataAt: at, standalone: true });
  for (const url of changes.add) put(url, true);
  // A URL in both lists (a server that does not net them out) ends removed, as opodsync stores it.
  for (const url of changes.remove) put(url, false);
  for (const [from, to] of changes.update_urls) {
    // The server renamed a URL: like a guid chain, the old one leads to the new one.
    const entry = entries.get(to);
    if (to !== '' && from !== to && entry) entries.set(from, { ...entry, guid: from, newGuid: to, guidChanged: stamp, standalone: false });
  }
}
