// Push: send queued changes, one at a time per subscription, several subscriptions at once.
import { SyncError, isSyncError, isTransient } from '../src/errors.ts';
import type { StoredChange } from '../src/schema.ts';
import { backoffDelay, type Backoff } from './backoff.ts';
import { errorInfo } from './error-info.ts';
import type { Http } from './http.ts';
import type { Store } from './store.ts';
import {
  parseAddResult,
  parseDeletion,
  parseDeletionAccepted,
  parseUpdateResult,
  type WireUpdateRequest,
  type WireUpdateResult,
} from './wire.ts';

/** What a push needs. */
export interface PushContext {
  http: Http;
  store: Store;
  backoff: Backoff;
  concurrency: number;
  /**
   * Send changes waiting out a backoff now (the server just answered a pull, or the app asked), except
   * where the server's own Retry-After still runs.
   */
  force?: boolean;
  /** Ids being sent right now (local edits do not coalesce into them). */
  inFlight: Set<number>;
  /** Whether sending must stop (offline, closed, paused by 401). */
  halted(): boolean;
  /** A 401/403: pause the queue until new credentials come. */
  onUnauthorized(error: SyncError): void;
  /** A 2xx whose body did not validate: ask for a pull to reconcile. */
  onNeedsPull(): void;
  onChange(guids: string[]): void;
  onError(error: SyncError): void;
}

/** The outcome of one push run. */
export interface PushResult {
  pushed: number;
  failed: number;
  /** Device time of the earliest change waiting for a retry, if any. */
  wakeAt?: number;
}

/** The first live change of each subscription (order per subscription is kept by sending only heads). */
function heads(changes: StoredChange[]): StoredChange[] {
  const byRow = new Map<string, StoredChange>();
  for (const change of changes) if (!byRow.has(change.guid)) byRow.set(change.guid, change);
  return [...byRow.values()];
}

/** Send everything that is due; resolves when nothing due is left. */
export async function push(ctx: PushContext): Promise<PushResult> {
  const result: PushResult = { pushed: 0, failed: 0 };
  const attempted = new Set<number>();
  for (;;) {
    if (ctx.halted()) return result;
    const all = heads(await ctx.store.pendingChanges());
    const now = Date.now();
    const ready = (c: StoredChange) => c.notBefore <= now || (ctx.force === true && (c.serverHold ?? 0) <= now);
    // One attempt per change per run: a change failing faster than its backoff must not spin this run.
    let due = all.filter((c) => ready(c) && !ctx.inFlight.has(c.id!) && !attempted.has(c.id!));
    for (const c of due) attempted.add(c.id!);
    const waiting = all.filter((c) => !due.includes(c) && !ctx.inFlight.has(c.id!));
    // A change already tried in this run goes again in a later run, never sooner than its own time.
    result.wakeAt = waiting.length ? Math.min(...waiting.map((c) => Math.max(c.notBefore, now + 1))) : undefined;
    if (!due.length) return result;
    const marked = await ctx.store.markSent(due.filter((c) => c.kind === 'add' && !c.sent).map((c) => c.id!));
    due = due.flatMap((c) => (c.kind !== 'add' || c.sent ? [c] : marked.has(c.id!) ? [marked.get(c.id!)!] : []));
    let cursor = 0;
    const worker = async () => {
      while (cursor < due.length && !ctx.halted()) {
        const change = due[cursor++]!;
        ctx.inFlight.add(change.id!);
        try {
          const outcome = await sendOne(ctx, change);
          if (outcome === 'done') result.pushed++;
          if (outcome === 'failed') result.failed++;
        } finally {
          ctx.inFlight.delete(change.id!);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(ctx.concurrency, due.length) }, worker));
  }
}

type Outcome = 'done' | 'failed' | 'later' | 'paused';

async function sendOne(ctx: PushContext, change: StoredChange): Promise<Outcome> {
  try {
    const { changed, outcome } = await attempt(ctx, change);
    if (changed.length) ctx.onChange(changed);
    return outcome;
  } catch (error) {
    if (!isSyncError(error)) throw error;
    return settle(ctx, change, error);
  }
}

/** Decide what an error means for a change, and record it. */
async function settle(ctx: PushContext, change: StoredChange, error: SyncError): Promise<Outcome> {
  if (error.code === 'closed') return 'later';
  if (error.code === 'unauthorized') {
    ctx.onUnauthorized(error);
    return 'paused';
  }
  if (error.code === 'quota') throw error;
  if (error.code === 'bad-response' && error.status !== undefined && error.status >= 200 && error.status < 300) {
    // A 2xx whose body is not the answer (a captive portal, a proxy) may not have reached the server at all.
    // Every request here is safe to repeat (PATCH sets values, POST upserts, DELETE of a deleted entry is
    // done), so keep the change and send it again; a pull meanwhile reconciles what the server has.
    ctx.onNeedsPull();
    ctx.onError(error);
    await ctx.store.later(change, Date.now() + backoffDelay(ctx.backoff, change.attempts), errorInfo(error));
    return 'later';
  }
  if (isTransient(error)) {
    ctx.onError(error);
    const now = Date.now();
    const notBefore = now + backoffDelay(ctx.backoff, change.attempts, error.retryAfter);
    await ctx.store.later(change, notBefore, errorInfo(error), error.retryAfter === undefined ? undefined : now + error.retryAfter);
    return 'later';
  }
  if (change.kind === 'remove' && (error.code === 'not-found' || error.code === 'gone') && change.state === 'queued') {
    // Nothing left to delete on the server: the deletion's goal is met.
    const edit = await ctx.store.ackDeleted(change, Date.now());
    ctx.onChange(edit.changed);
    return 'done';
  }
  if (change.state === 'deleting' && error.code === 'not-found') {
    // The server forgot the job: ask again (DELETE is safe to repeat).
    await ctx.store.patchChange(change, { state: 'queued', deletionId: undefined, notBefore: 0 });
    return 'later';
  }
  const edit = await ctx.store.fail(change, errorInfo(error));
  ctx.onChange(edit.changed);
  return 'failed';
}

/** Validate a 2xx body; a failure keeps the status so `settle` knows the server did act. */
function read<T>(response: { status: number; body: unknown }, parse: (body: unknown) => T): T {
  try {
    return parse(response.body);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new SyncError('bad-response', message, { status: response.status });
  }
}

/** Send one change; returns the guids whose view changed and where the change stands, or throws a `SyncError`. */
async function attempt(ctx: PushContext, change: StoredChange): Promise<{ changed: string[]; outcome: Outcome }> {
  const done = (edit: { changed: string[] }) => ({ changed: edit.changed, outcome: 'done' as const });
  const { http, store } = ctx;
  if (change.kind === 'add') {
    const body = { subscriptions: [{ feed_url: change.feedUrl!, ...(change.addGuid ? { guid: change.addGuid } : {}) }] };
    const response = await http.request('POST', http.url('subscriptions'), body);
    const result = read(response, parseAddResult);
    const item = result.success.find((s) => s.feed_url === change.feedUrl) ?? result.success[0];
    if (!item) {
      const refusal = result.failure[0];
      throw new SyncError('invalid', `POST /subscriptions: ${refusal?.message ?? 'the server added nothing'}`, { status: response.status });
    }
    return done(await store.ackAdd(change, item));
  }

  const guid = await store.address(change);
  if (guid === undefined) throw new SyncError('not-found', 'the subscription has no server guid yet');
  const path = `subscriptions/${encodeURIComponent(guid)}`;

  if (change.kind === 'update') {
    const c = change.change ?? {};
    const body: WireUpdateRequest = {};
    if (c.feedUrl !== undefined) body.new_feed_url = c.feedUrl;
    if (c.guid !== undefined) body.new_guid = c.guid;
    if (c.isSubscribed !== undefined) body.is_subscribed = c.isSubscribed;
    const response = await http.request('PATCH', http.url(path), body);
    const result: WireUpdateResult = read(response, parseUpdateResult);
    return done(await store.ackUpdate(change, result));
  }

  if (change.state === 'deleting' && change.deletionId !== undefined) {
    const response = await http.request('GET', http.url(`deletions/${change.deletionId}`));
    const status = read(response, parseDeletion);
    if (status.status === 'PENDING') {
      await store.later(change, Date.now() + backoffDelay(ctx.backoff, change.attempts), undefined);
      return { changed: [], outcome: 'later' };
    }
    if (status.status === 'SUCCESS') return done(await store.ackDeleted(change, Date.now()));
    // FAILURE: the server rolled the deletion back, so the subscription is back too (the view follows the base).
    const message = `deletion ${change.deletionId} failed on the server and was rolled back${status.message ? `: ${status.message}` : ''}`;
    const edit = await store.fail(change, { code: 'server', message });
    return { changed: edit.changed, outcome: 'failed' };
  }

  const response = await http.request('DELETE', http.url(path));
  if (response.body === undefined) return done(await store.ackDeleted(change, Date.now()));
  const accepted = read(response, parseDeletionAccepted);
  const edit = await store.deletionAccepted(change, accepted.deletion_id, Date.now() + backoffDelay(ctx.backoff, 0) / 4);
  return { changed: edit.changed, outcome: 'later' };
}
