// gPodder pull: one request for every change since the cursor (no paging in this protocol).
import type { Http } from '../http.ts';
import { formatTimestamp } from '../time.ts';
import type { PullSink, RemoteEntry } from '../transport.ts';
import { parseChanges } from './wire.ts';

/** Pull the changes since the sink's cursor (seconds on the wire, ms in the store). */
export async function pullGpodder(http: Http, path: string, sink: PullSink): Promise<void> {
  // The last answer's own `timestamp`, as the protocol says. No overlap: these servers answer with the net
  // effect since `since`, so re-asking a window that holds this device's own upload would net out another
  // device's undoing of it. (mygpo's `since` is exclusive with whole seconds: a change made in the second of
  // the last answer, after it, is not seen until it changes again. opodsync's is inclusive: no such gap.)
  const since = sink.cursor === undefined ? 0 : Math.floor(sink.cursor / 1000);
  const changes = parseChanges((await http.request('GET', http.url(path, { since }))).body);
  // The answer is the server's state at its `timestamp`: every entry is stamped with it.
  const at = changes.timestamp * 1000;
  const stamp = formatTimestamp(at);
  const entries = new Map<string, RemoteEntry>();
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
  await sink.apply([...entries.values()], { cursor: Math.max(at, sink.cursor ?? 0) });
  sink.progress({ pages: 1, entries: entries.size });
}
