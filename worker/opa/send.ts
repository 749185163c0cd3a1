// Open Podcast API push: adds share a POST (its body takes a list), every other change has a request of its own
// (PATCH updates, DELETE and its job).
import { SyncError, isSyncError } from '../../src/errors.ts';
import { isGuid } from '../guid.ts';
import type { Http } from '../http.ts';
import type { StoredChange } from '../../src/schema.ts';
import type { PlannedRequest, SendItem, SendOutcome, WireRequest } from '../transport.ts';
import { toAddedEntry, toUpdateResult } from './entries.ts';
import { parseAddResult, parseDeletion, parseDeletionAccepted, parseUpdateResult, type WireUpdateRequest } from './wire.ts';

/** Validate a 2xx body; a failure keeps the status so the outbox knows the server did answer. */
function read<T>(response: { status: number; body: unknown }, parse: (body: unknown) => T): T {
  try {
    return parse(response.body);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new SyncError('bad-response', message, { status: response.status });
  }
}

/** The PATCH body of an update: only the fields it sets. */
function patchBody(change: StoredChange): WireUpdateRequest {
  const c = change.change ?? {};
  const body: WireUpdateRequest = {};
  if (c.feedUrl !== undefined) body.new_feed_url = c.feedUrl;
  if (c.guid !== undefined) body.new_guid = c.guid;
  if (c.isSubscribed !== undefined) body.is_subscribed = c.isSubscribed;
  return body;
}

/** Adds one POST carries: 1,000 feeds imported offline reach the server in 10 requests, each body about 10 KB. */
export const ADDS_PER_REQUEST = 100;

const postOf = (items: SendItem[]): WireRequest => ({
  method: 'POST',
  path: 'subscriptions',
  body: { subscriptions: items.map(({ change }) => ({ feed_url: change.feedUrl!, ...(change.addGuid && { guid: change.addGuid }) })) },
  items,
});

/**
 * The requests for queued changes: adds in POSTs of `ADDS_PER_REQUEST` (its body takes a list), a PATCH or a DELETE
 * each (harmless to repeat: a PATCH sets the same fields again, a DELETE of a deleted entry is answered 404/410,
 * done to the outbox), a deletion job's GET. A POST is not harmless: one whose answer nobody reads may create the
 * feed under a guid the server chose, and the next open's pull would list it before the queued add's own POST is
 * answered. Nor is a guid change: its old guid then leads to the new one, which the next open would be told to
 * rename again.
 */
export function planOpa(items: readonly SendItem[]): PlannedRequest[] {
  const adds = items.filter((i) => i.change.kind === 'add');
  const out: PlannedRequest[] = [];
  for (let i = 0; i < adds.length; i += ADDS_PER_REQUEST) out.push(postOf(adds.slice(i, i + ADDS_PER_REQUEST)));
  for (const item of items) {
    const { change, target } = item;
    const items = [item];
    if (change.kind === 'add') continue;
    if (change.state === 'deleting' && change.deletionId !== undefined) out.push({ method: 'GET', path: `deletions/${change.deletionId}`, items });
    // The last check before a guid becomes a path segment (a store written before the rule may hold one).
    else if (target === undefined || !isGuid(target)) {
      const error = target === undefined ? new SyncError('not-found', 'the subscription has no server guid yet') : new SyncError('invalid', `the guid ${JSON.stringify(target)} cannot be addressed: it would change the request path`);
      out.push({ items, outcome: { type: 'error', error } });
    } else {
      const remove = change.kind === 'remove';
      out.push({ method: remove ? 'DELETE' : 'PATCH', path: `subscriptions/${encodeURIComponent(target)}`, body: remove ? undefined : patchBody(change), items });
    }
  }
  return out;
}

/**
 * Send one planned request; every `SyncError` becomes an outcome (the outbox classifies it). A 413 on a POST of
 * several sends each half on its own, until an answer refuses nothing.
 */
export async function sendOpa(http: Http, request: WireRequest): Promise<SendOutcome[]> {
  const { items, method } = request;
  try {
    const response = await http.request(method, http.url(request.path), request.body);
    if (method === 'POST') return added(items, response);
    if (method === 'PATCH') return [{ type: 'updated', result: toUpdateResult(read(response, parseUpdateResult)) }];
    // 204 is "deleted, nothing to add" (an empty 200/201/202 never gets here: the HTTP layer refuses it).
    if (method === 'DELETE') return [response.status === 204 ? { type: 'deleted' } : { type: 'deletion-started', deletionId: read(response, parseDeletionAccepted).deletion_id }];
    const status = read(response, parseDeletion);
    if (status.status === 'PENDING') return [{ type: 'deletion-pending' }];
    if (status.status === 'SUCCESS') return [{ type: 'deleted' }];
    // FAILURE: the server rolled the deletion back, so the subscription is back too.
    return [{ type: 'deletion-failed', message: `deletion ${items[0]!.change.deletionId} failed on the server and was rolled back${status.message ? `: ${status.message}` : ''}` }];
  } catch (error) {
    if (!isSyncError(error)) throw error;
    if (error.status !== 413 || items.length < 2) return items.map(() => ({ type: 'error', error }));
    const half = items.length >> 1;
    const first = await sendOpa(http, postOf(items.slice(0, half)));
    // An answer that is not the server's word on each add (a portal's page, a 5xx, a redirect away, none, one
    // leaving adds out) ends the halving: the other half would get it too, one request each. It waits with it.
    const stop = first.find((o) => o.type === 'error' && o.error.status !== 413 && (o.error.code !== 'invalid' || !o.error.status));
    return [...first, ...(stop ? items.slice(half).map(() => stop) : await sendOpa(http, postOf(items.slice(half))))];
  }
}

/**
 * What a POST's answer says of each add: its own entry (`success` or `failure`, found by feed URL; by place when
 * every one succeeded, as a server that rewrites URLs answers).
 */
function added(items: SendItem[], response: { status: number; body: unknown }): SendOutcome[] {
  const { success, failure } = read(response, parseAddResult);
  return items.map(({ change }, i): SendOutcome => {
    const added = success.find((s) => s.feed_url === change.feedUrl) ?? (success.length === items.length ? success[i] : undefined);
    if (added) return { type: 'added', entry: toAddedEntry(added) };
    const refusal = failure.find((f) => f.feed_url === change.feedUrl) ?? (items.length > 1 ? undefined : failure[0]);
    // Named in neither list of a shared answer: unknown whether it was added; a pull will say (a POST is safe to repeat).
    if (!refusal && items.length > 1) return { type: 'error', error: new SyncError('bad-response', `POST /subscriptions: the answer does not name ${change.feedUrl}`, { status: response.status }) };
    return { type: 'error', error: new SyncError('invalid', `POST /subscriptions: ${refusal?.message ?? 'the server added nothing'}`, { status: response.status }) };
  });
}
