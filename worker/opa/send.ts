// Open Podcast API push: adds share a POST (its body takes a list), every other change has a request of its own
// (PATCH updates, DELETE and its job).
import { SyncError, isSyncError } from '../../src/errors.ts';
import { isGuid } from '../guid.ts';
import { lastChanceRequest, type Http } from '../http.ts';
import type { LastChanceRequest } from '../../src/protocol.ts';
import type { StoredChange } from '../../src/schema.ts';
import type { SendItem, SendOutcome } from '../transport.ts';
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

/**
 * The last-chance requests for queued changes: a PATCH sets the same fields again, a DELETE of a deleted entry
 * is answered 404/410 (done, to the outbox). A guid change is left out (its old guid then leads to the new one,
 * which the next open would be told to rename again), and so is an add: a POST whose answer nobody reads may
 * create the feed under a guid the server chose, and the next open's pull would list it before the queued add's
 * own POST is answered; adds wait for the next open instead of depending on how those two meet.
 */
export function lastChanceOpa(items: readonly SendItem[]): LastChanceRequest[] {
  const out: LastChanceRequest[] = [];
  for (const { change, target } of items) {
    if (change.kind === 'add' || change.state !== 'queued' || change.change?.guid !== undefined || target === undefined || !isGuid(target)) continue;
    const path = `subscriptions/${encodeURIComponent(target)}`;
    out.push(change.kind === 'remove' ? lastChanceRequest('DELETE', path) : lastChanceRequest('PATCH', path, patchBody(change)));
  }
  return out;
}

/** Send one change, or adds in one POST; every `SyncError` becomes an outcome (the outbox classifies it). */
export async function sendOpa(http: Http, items: readonly SendItem[]): Promise<SendOutcome[]> {
  try {
    return items[0]!.change.kind === 'add' ? await postAdds(http, items) : [await request(http, items[0]!)];
  } catch (error) {
    if (isSyncError(error)) return items.map(() => ({ type: 'error', error }));
    throw error;
  }
}

/**
 * Adds in one `POST /subscriptions`, each settled by its own entry in the answer (`success` or `failure`, found
 * by feed URL; by place when every one succeeded, as a server that rewrites URLs answers). A 413 (the body too
 * large for the server) sends each half on its own.
 */
async function postAdds(http: Http, items: readonly SendItem[]): Promise<SendOutcome[]> {
  const body = { subscriptions: items.map(({ change }) => ({ feed_url: change.feedUrl!, ...(change.addGuid && { guid: change.addGuid }) })) };
  let response;
  try {
    response = await http.request('POST', http.url('subscriptions'), body);
  } catch (error) {
    if (!isSyncError(error) || error.status !== 413 || items.length < 2) throw error;
    const half = items.length >> 1;
    return [...(await sendOpa(http, items.slice(0, half))), ...(await sendOpa(http, items.slice(half)))];
  }
  const { success, failure } = read(response, parseAddResult);
  return items.map(({ change }, i): SendOutcome => {
    const added = success.find((s) => s.feed_url === change.feedUrl) ?? (success.length === items.length ? success[i] : undefined);
    if (added) return { type: 'added', entry: toAddedEntry(added) };
    const refusal = failure.find((f) => f.feed_url === change.feedUrl) ?? (items.length > 1 ? undefined : failure[0]);
    // Named in neither list of a shared answer: unknown whether it was added; a pull will say (a POST is safe to repeat).
    if (!refusal && items.length > 1) return { type: 'error', error: new SyncError('bad-response', `POST /subscriptions: the answer does not name ${change.feedUrl}`, { status: response.status }) };
    return { type: 'error', error: new SyncError('invalid', `POST /subscriptions: ${refusal?.message ?? 'nothing added'}`, { status: response.status }) };
  });
}

async function request(http: Http, { change, target }: SendItem): Promise<SendOutcome> {
  if (change.state === 'deleting' && change.deletionId !== undefined) {
    const response = await http.request('GET', http.url(`deletions/${change.deletionId}`));
    const status = read(response, parseDeletion);
    if (status.status === 'PENDING') return { type: 'deletion-pending' };
    if (status.status === 'SUCCESS') return { type: 'deleted' };
    // FAILURE: the server rolled the deletion back, so the subscription is back too.
    return { type: 'deletion-failed', message: `deletion ${change.deletionId} failed on the server and was rolled back${status.message ? `: ${status.message}` : ''}` };
  }

  if (target === undefined) throw new SyncError('not-found', 'the subscription has no server guid yet');
  // The last check before a guid becomes a path segment (a store written before the rule may hold one).
  if (!isGuid(target)) throw new SyncError('invalid', `the guid ${JSON.stringify(target)} cannot be a path segment`);
  const path = `subscriptions/${encodeURIComponent(target)}`;

  if (change.kind === 'update') {
    const response = await http.request('PATCH', http.url(path), patchBody(change));
    return { type: 'updated', result: toUpdateResult(read(response, parseUpdateResult)) };
  }

  const response = await http.request('DELETE', http.url(path));
  // 204 is "deleted, nothing to add" (an empty 200/201/202 never gets here: the HTTP layer refuses it).
  if (response.status === 204) return { type: 'deleted' };
  return { type: 'deletion-started', deletionId: read(response, parseDeletionAccepted).deletion_id };
}
