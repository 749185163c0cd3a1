// gPodder push: every ready change in one upload of `add`/`remove` lists (at most MAX_UPLOAD_URLS a request).
// A subscription's changes fold in order, its last word on a URL winning; a URL never goes in both lists for
// two subscriptions (the later change waits for the next upload). An upload the server refuses whole (400,
// or 413 from a body limit in front of it) is split until the refused changes are found, so the good ones go;
// an answer that refuses nothing (a portal's page, a 5xx, a redirect away, no answer) ends the splitting.
import { SyncError, isSyncError } from '../../src/errors.ts';
import type { Http } from '../http.ts';
import { formatTimestamp } from '../time.ts';
import type { PlannedRequest, SendItem, SendOutcome, WireRequest } from '../transport.ts';
import { renames } from './renames.ts';
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
function outcomeOf(item: SendItem, answer: WireUploaded, offset: number): SendOutcome {
  const renamed = renames(answer.update_urls);
  const final = (url: string) => renamed.get(url) ?? url;
  // Ordered as pulls order this server's entries (after its clock went back, see `pullGpodder`).
  const stamp = formatTimestamp(answer.timestamp * 1000 + offset);
  const { change, target } = item;
  const url = change.kind === 'add' ? change.feedUrl! : change.kind === 'remove' ? target! : (change.change?.feedUrl ?? target!);
  if (answer.unreadable.includes(url)) {
    return { type: 'error', error: new SyncError('bad-response', `the upload answer names no usable feed URL for ${url}`, { status: 200 }) };
  }
  if (change.kind === 'remove') return { type: 'deleted' };
  const stored = final(url);
  if (stored === '') return { type: 'error', error: new SyncError('invalid', `the server refused the feed URL ${url}`, { status: 200 }) };
  if (change.kind === 'add') return { type: 'added', entry: { guid: stored, feedUrl: stored, isSubscribed: true, subscriptionChanged: stamp } };
  const isSubscribed = change.change?.isSubscribed ?? item.isSubscribed ?? true;
  const result: SendOutcome & { type: 'updated' } = { type: 'updated', result: { feedUrl: stored, isSubscribed, subscriptionChanged: stamp } };
  if (stored !== target) Object.assign(result.result, { newGuid: stored, guidChanged: stamp });
  return result;
}

/**
 * Most URLs in one upload. Typical feed URLs are under 100 bytes, so 1,000 make a body of about 100 KB: far
 * below the 1 MiB that proxies in front of these servers commonly accept (nginx's default body limit), and one
 * server transaction of a bounded size. A body refused anyway (413) is split further.
 */
export const MAX_UPLOAD_URLS = 1000;

/** One subscription's changes in this upload, folded into the list operations they add up to. */
interface Unit {
  items: SendItem[];
  add: Set<string>;
  remove: Set<string>;
}

/** Which subscriptions (row guids) name each URL in one list. */
type Owners = Map<string, Set<string>>;

const own = (owners: Owners, url: string, row: string, on: boolean) => {
  const rows = owners.get(url) ?? new Set<string>();
  if (on) rows.add(row);
  else rows.delete(row);
  owners.set(url, rows);
};
const other = (owners: Owners, url: string, row: string) => [...(owners.get(url) ?? [])].some((r) => r !== row);

/**
 * Fold items into per-subscription units of list operations; `outcomes` gets what is not sent this time (deferred,
 * or an error) and `units` what goes.
 */
function fold(items: readonly SendItem[]): { outcomes: Map<SendItem, SendOutcome>; units: Unit[] } {
  const outcomes = new Map<SendItem, SendOutcome>();
  const units = new Map<string, Unit>();
  const adds: Owners = new Map();
  const removes: Owners = new Map();
  // A subscription whose earlier change does not go this time: its later ones wait too (order is kept).
  const held = new Set<string>();
  for (const item of items) {
    const row = item.change.guid;
    if (held.has(row)) {
      outcomes.set(item, { type: 'deferred' });
      continue;
    }
    const ops = opsFor(item);
    if (ops instanceof SyncError) {
      outcomes.set(item, { type: 'error', error: ops });
      held.add(row);
      continue;
    }
    // The same URL in both lists is refused by mygpo and means "remove" to opodsync: another subscription's
    // opposite word on it waits for the next upload.
    if (ops.add.some((u) => other(removes, u, row)) || ops.remove.some((u) => other(adds, u, row))) {
      outcomes.set(item, { type: 'deferred' });
      held.add(row);
      continue;
    }
    const unit = units.get(row) ?? { items: [], add: new Set<string>(), remove: new Set<string>() };
    units.set(row, unit);
    // A later change of the same subscription replaces its earlier word on a URL.
    for (const u of ops.add) {
      unit.remove.delete(u);
      own(removes, u, row, false);
      unit.add.add(u);
      own(adds, u, row, true);
    }
    for (const u of ops.remove) {
      unit.add.delete(u);
      own(adds, u, row, false);
      unit.remove.add(u);
      own(removes, u, row, true);
    }
    unit.items.push(item);
  }
  return { outcomes, units: [...units.values()] };
}

/** The upload body of some units. */
const uploadBody = (batch: Unit[]): WireUpload => ({ add: [...new Set(batch.flatMap((u) => [...u.add]))], remove: [...new Set(batch.flatMap((u) => [...u.remove]))] });

/**
 * The uploads for these items, at most MAX_UPLOAD_URLS URLs each (adding or removing a URL twice is harmless), and
 * the items that wait for the next upload or cannot go, with their outcome.
 */
export function planGpodder(path: string, items: readonly SendItem[]): PlannedRequest[] {
  const { outcomes, units } = fold(items);
  const out: PlannedRequest[] = [...outcomes].map(([item, outcome]) => ({ items: [item], outcome }));
  for (const batch of chunks(units)) out.push({ method: 'POST', path, body: uploadBody(batch), items: batch.flatMap((u) => u.items) });
  return out;
}

/** Send one planned upload (splitting it where the server refuses it whole): an outcome per item, in order. */
export async function sendGpodder(http: Http, request: WireRequest, uploaded: (timestamp: number) => void, offset: number): Promise<SendOutcome[]> {
  const outcomes = new Map<SendItem, SendOutcome>();
  const error = await upload(http, request.path, fold(request.items).units, outcomes, uploaded, (item, answer) => outcomeOf(item, answer, offset));
  // What a halving left unsent gets the answer that ended it (the rest would get it too, one request each).
  return request.items.map((item) => outcomes.get(item) ?? { type: 'error', error: error! });
}

/** Units in uploads of at most MAX_UPLOAD_URLS URLs (a unit is never split: its changes go together). */
function chunks(units: Unit[]): Unit[][] {
  const out: Unit[][] = [];
  let current: Unit[] = [];
  let size = 0;
  for (const unit of units) {
    const n = unit.add.size + unit.remove.size;
    if (current.length && size + n > MAX_UPLOAD_URLS) {
      out.push(current);
      current = [];
      size = 0;
    }
    current.push(unit);
    size += n;
  }
  if (current.length) out.push(current);
  return out;
}

/** How an upload's answer settles each change (`outcomeOf` with the transport's clock offset). */
type Judge = (item: SendItem, answer: WireUploaded) => SendOutcome;

/** Send units, halving them where the body is refused; returns an error that refuses nothing (a portal's page, a 5xx): it ends the halving. */
async function upload(http: Http, path: string, batch: Unit[], outcomes: Map<SendItem, SendOutcome>, uploaded: (timestamp: number) => void, judge: Judge): Promise<SyncError | void> {
  if (!batch.length) return;
  const body = uploadBody(batch);
  try {
    const response = await http.request('POST', http.url(path), body);
    let answer: WireUploaded;
    try {
      answer = parseUploaded(response.body);
    } catch (error) {
      throw new SyncError('bad-response', error instanceof Error ? error.message : String(error), { status: response.status });
    }
    uploaded(answer.timestamp);
    for (const unit of batch) for (const item of unit.items) outcomes.set(item, judge(item, answer));
  } catch (error) {
    if (!isSyncError(error)) throw error;
    // 400: refused whole, nothing of it stored. 413: too large for the server or a proxy in front of it.
    if ((error.status === 400 || error.status === 413) && batch.length > 1) {
      // Halve it until the refused change stands alone (or the halves fit).
      const half = Math.ceil(batch.length / 2);
      return (await upload(http, path, batch.slice(0, half), outcomes, uploaded, judge)) ?? upload(http, path, batch.slice(half), outcomes, uploaded, judge);
    }
    for (const unit of batch) for (const item of unit.items) outcomes.set(item, { type: 'error', error });
    if (error.status !== 413 && (error.code !== 'invalid' || !error.status)) return error;
  }
}
