// gPodder push: every ready change in one upload of `add`/`remove` lists. A URL never goes in both lists (the
// later change waits for the next upload), and an upload the server refuses whole (400) is split until the
// refused changes are found, so the good ones still go.
import { SyncError, isSyncError } from '../../src/errors.ts';
import type { StoredChange } from '../../src/schema.ts';
import type { Http } from '../http.ts';
import { formatTimestamp } from '../time.ts';
import type { SendItem, SendOutcome } from '../transport.ts';
import { parseUploaded, type WireUpload, type WireUploaded } from './wire.ts';

/** One change as list operations. */
interface Ops {
  add: string[];
  remove: string[];
}

/** The list operations a change needs, or why it cannot be sent yet. */
function opsFor({ change, target, isSubscribed }: SendItem): Ops | SyncError {
  if (change.kind === 'add') return { add: [change.feedUrl!], remove: [] };
  if (target === undefined) return new SyncError('not-found', 'the subscription has no server URL yet');
  if (change.kind === 'remove') return { add: [], remove: [target] };
  const c = change.change ?? {};
  const url = c.feedUrl ?? target;
  const moved = url !== target;
  // A move keeps the subscription's flag unless the change sets it: an unsubscribed feed moves unsubscribed.
  const subscribed = c.isSubscribed ?? isSubscribed ?? true;
  if (!moved) return subscribed ? { add: [target], remove: [] } : { add: [], remove: [target] };
  // A move is the old URL removed and the new one added (or removed too, when it also unsubscribes).
  return subscribed ? { add: [url], remove: [target] } : { add: [], remove: [target, url] };
}

/** What the server's answer means for one change. */
function outcomeOf(item: SendItem, answer: WireUploaded): SendOutcome {
  const renamed = new Map(answer.update_urls);
  const final = (url: string) => (renamed.has(url) ? renamed.get(url)! : url);
  const stamp = formatTimestamp(answer.timestamp * 1000);
  const { change, target } = item;
  if (change.kind === 'remove') return { type: 'deleted' };
  const url = change.kind === 'add' ? change.feedUrl! : (change.change?.feedUrl ?? target!);
  const stored = final(url);
  if (stored === '') return { type: 'error', error: new SyncError('invalid', `the server refused the feed URL ${url}`, { status: 200 }) };
  if (change.kind === 'add') return { type: 'added', entry: { guid: stored, feedUrl: stored, isSubscribed: true, subscriptionChanged: stamp } };
  const isSubscribed = change.change?.isSubscribed ?? item.isSubscribed ?? true;
  const result: SendOutcome & { type: 'updated' } = { type: 'updated', result: { feedUrl: stored, isSubscribed, subscriptionChanged: stamp } };
  if (stored !== target) Object.assign(result.result, { newGuid: stored, guidChanged: stamp });
  return result;
}

/** Send changes as one upload (splitting it when the server refuses it whole). */
export async function sendGpodder(http: Http, path: string, items: readonly SendItem[], uploaded: (timestamp: number) => void): Promise<SendOutcome[]> {
  const outcomes = new Map<StoredChange, SendOutcome>();
  const batch: { item: SendItem; ops: Ops }[] = [];
  const adds = new Set<string>();
  const removes = new Set<string>();
  for (const item of items) {
    const ops = opsFor(item);
    if (ops instanceof SyncError) {
      outcomes.set(item.change, { type: 'error', error: ops });
      continue;
    }
    // The same URL in both lists is refused by mygpo and means "remove" to opodsync: it waits instead.
    if (ops.add.some((u) => removes.has(u)) || ops.remove.some((u) => adds.has(u))) {
      outcomes.set(item.change, { type: 'deferred' });
      continue;
    }
    for (const u of ops.add) adds.add(u);
    for (const u of ops.remove) removes.add(u);
    batch.push({ item, ops });
  }
  await upload(http, path, batch, outcomes, uploaded);
  return items.map((item) => outcomes.get(item.change)!);
}

async function upload(
  http: Http,
  path: string,
  batch: { item: SendItem; ops: Ops }[],
  outcomes: Map<StoredChange, SendOutcome>,
  uploaded: (timestamp: number) => void,
): Promise<void> {
  if (!batch.length) return;
  const body: WireUpload = { add: [...new Set(batch.flatMap((b) => b.ops.add))], remove: [...new Set(batch.flatMap((b) => b.ops.remove))] };
  try {
    const response = await http.request('POST', http.url(path), body);
    let answer: WireUploaded;
    try {
      answer = parseUploaded(response.body);
    } catch (error) {
      throw new SyncError('bad-response', error instanceof Error ? error.message : String(error), { status: response.status });
    }
    uploaded(answer.timestamp);
    for (const { item } of batch) outcomes.set(item.change, outcomeOf(item, answer));
  } catch (error) {
    if (!isSyncError(error)) throw error;
    if (error.status === 400 && batch.length > 1) {
      // Refused whole: nothing of it was stored. Halve it until the refused change stands alone.
      const half = Math.ceil(batch.length / 2);
      await upload(http, path, batch.slice(0, half), outcomes, uploaded);
      await upload(http, path, batch.slice(half), outcomes, uploaded);
      return;
    }
    for (const { item } of batch) outcomes.set(item.change, { type: 'error', error });
  }
}
