// Push: send what the plan (plan.ts) says goes, one change at a time per subscription, and settle each outcome in
// the store. Which requests carry them is the transport's business; what an answer means is decided here.
import { SyncError } from '../src/errors.ts';
import { isTransient } from './transient.ts';
import type { Handout, StoredChange } from '../src/schema.ts';
import type { Clock } from '../src/types.ts';
import { backoffDelay, type Backoff } from './backoff.ts';
import { errorInfo } from './error-info.ts';
import type { Hold } from './hold.ts';
import { choose } from './plan.ts';
import type { Ack, Wait } from './store/acks.ts';
import { harmless } from './store/delivery.ts';
import type { Store } from './store/store.ts';
import type { PlannedRequest, SendOutcome, Transport } from './transport.ts';

/** What a push needs. */
export interface PushContext {
  transport: Transport;
  store: Store;
  clock: Clock;
  /** Device time that does not step while the engine runs (`steadyNow`): holds are set and read in it. */
  now(): number;
  backoff: Backoff;
  concurrency: number;
  /**
   * Send changes waiting out a backoff now (the server just answered a pull, or the app asked), except
   * where the server's own Retry-After still runs.
   */
  force?: boolean;
  /** Who hands changes out here (see `Handout`). */
  by: Handout['by'];
  /** Ids being sent right now (local edits do not coalesce into them). */
  inFlight: Set<number>;
  /** Whether sending must stop (offline, closed, paused by 401). */
  halted(): boolean;
  /** A 401/403: pause the queue until new credentials come. */
  onUnauthorized(error: SyncError): void;
  /** A 2xx whose body did not validate: ask for a pull to reconcile. */
  onNeedsPull(): void;
  onChange(guids: string[]): void;
  /** Queue entries changed (acknowledged, retried later with their attempts and error, refused). */
  onQueue(): void;
  onError(error: SyncError): void;
}

/** The outcome of one push run. */
export interface PushResult {
  pushed: number;
  failed: number;
  /** Steady device time (`PushContext.now`) to look again: when the server's hold ends, or a waiting change is due. */
  wakeAt?: number;
  /** Whether a change that may have reached the server failed in this run (its retry pulls first, see `handOut`). */
  pullNext?: boolean;
}

/** Where a change stands after one attempt; `deferred` was not sent (not an attempt). */
type Settled = 'done' | 'failed' | 'later' | 'paused' | 'deferred';

/** Send everything that is due; resolves when nothing due is left. */
export async function push(ctx: PushContext): Promise<PushResult> {
  const result: PushResult = { pushed: 0, failed: 0 };
  const attempted = new Set<number>();
  // Whether the server answered a request of this run: it is back, so what waits out a backoff goes (never a Retry-After).
  let answered = false;
  for (;;) {
    if (ctx.halted()) return result;
    // One attempt per change per run: a change failing faster than its backoff must not spin this run.
    const open = (c: StoredChange) => !ctx.inFlight.has(c.id!) && !attempted.has(c.id!);
    let going: StoredChange[] = [];
    try {
      // Chosen from the queue and handed out in one transaction, before they leave: one that may have reached the
      // server is never folded away or into (a second move of a gPodder feed does not compose with the first: the
      // middle URL would stay subscribed). One not harmless to repeat waits for a pull; an add whose feed the
      // server changed since is settled by the server's word (see `handOut`).
      const marked = await ctx.store.handOut(
        (pending) => {
          const choice = choose(pending, ctx.transport, { now: ctx.now(), answered: ctx.force || answered, open });
          going = choice.going;
          // In flight from here, before the transaction commits: an edit made meanwhile queues behind it instead
          // of folding into a copy already on its way (which would then be sent twice), and no other request takes it.
          for (const c of going) {
            attempted.add(c.id!);
            ctx.inFlight.add(c.id!);
          }
          // A change already tried in this run goes again in a later run, never sooner than its own time.
          result.wakeAt = choice.wakeAt;
          // (Read from the last round, which sends nothing.)
          result.pullNext = pending.some((c) => c.sent && !harmless(c) && attempted.has(c.id!));
          return going;
        },
        ctx.by,
        ctx.clock.now(),
      );
      if (!going.length) return result;
      if (marked.changed.length) {
        ctx.onChange(marked.changed);
        ctx.onQueue();
      }
      const requests = ctx.transport.plan(marked.result);
      let cursor = 0;
      const worker = async () => {
        while (cursor < requests.length && !ctx.halted()) {
          const request = requests[cursor++]!;
          const settled = await sendBatch(ctx, request);
          // Not sent (it clashed with another change of the request): free to go in this run's next request.
          settled.forEach((s, i) => {
            if (s === 'deferred') attempted.delete(request.items[i]!.change.id!);
            if (s === 'done') result.pushed++;
            if (s === 'failed') result.failed++;
          });
          answered ||= settled.includes('done');
        }
      };
      // A batching protocol's uploads go one after another; other requests several at once.
      await Promise.all(Array.from({ length: ctx.transport.batching === 'all' ? 1 : ctx.concurrency }, worker));
    } finally {
      // What was not sent (halted, or gone from the queue) is free again.
      for (const c of going) ctx.inFlight.delete(c.id!);
    }
  }
}

/** Send one planned request (its changes marked in flight by the caller) and settle each outcome. */
async function sendBatch(ctx: PushContext, request: PlannedRequest): Promise<Settled[]> {
  const changes = request.items.map((i) => i.change);
  try {
    const outcomes = 'outcome' in request ? changes.map(() => request.outcome) : await ctx.transport.send(request);
    const settled: Settled[] = await settleInBulk(ctx, changes, outcomes);
    for (let i = 0; i < changes.length; i++) settled[i] ??= await settle(ctx, changes[i]!, outcomes[i]!);
    // Every outcome but these rewrote its queue entry: one event for the batch.
    if (settled.some((s) => s !== 'deferred' && s !== 'paused')) ctx.onQueue();
    return settled;
  } finally {
    for (const change of changes) ctx.inFlight.delete(change.id!);
  }
}

/**
 * Settle in one transaction each the changes the server took and those to try again after a backoff (one
 * upload may carry every change queued); the other outcomes are left for `settle`.
 */
async function settleInBulk(ctx: PushContext, changes: StoredChange[], outcomes: SendOutcome[]): Promise<Settled[]> {
  const settled: Settled[] = [];
  const acks: Ack[] = [];
  const waits: Wait[] = [];
  const errors = new Set<SyncError>();
  // One hold for the request: the server's backoff, kept with every change it carried.
  let hold: Hold | undefined;
  changes.forEach((sent, i) => {
    const outcome = outcomes[i]!;
    if (outcome.type === 'added' || outcome.type === 'updated') acks.push({ sent, ...outcome });
    else if (outcome.type === 'deleted') acks.push({ sent, type: 'deleted', now: ctx.clock.now() });
    // Trouble on the way or at the server, not a refusal: try again after a backoff (the request's, grown with the
    // attempts of its oldest change).
    else if (outcome.type === 'error' && isTransient(outcome.error)) {
      errors.add(outcome.error);
      waits.push({ sent, hold: (hold ??= backoffHold(ctx, changes[0]!.attempts, outcome.error.retryAfter)), lastError: errorInfo(outcome.error) });
    } else return;
    settled[i] = outcome.type === 'error' ? 'later' : 'done';
  });
  if (acks.length) {
    const edit = await ctx.store.acks(acks);
    if (edit.changed.length) ctx.onChange(edit.changed);
  }
  for (const error of errors) ctx.onError(error);
  if (waits.length) await ctx.store.laterAll(waits);
  return settled;
}

/**
 * The wait changes take after a transient error: the backoff, grown with `attempts`, and the server's Retry-After
 * as a hold even a pull's answer keeps.
 */
function backoffHold(ctx: PushContext, attempts: number, retryAfter?: number): Hold {
  const now = ctx.now();
  return { heldAt: now, notBefore: now + backoffDelay(ctx.backoff, attempts, retryAfter, ctx.clock.random), ...(retryAfter === undefined ? {} : { serverHold: now + retryAfter }) };
}

/** Record what the server answered to one change (what `settleInBulk` left). */
async function settle(ctx: PushContext, change: StoredChange, outcome: SendOutcome): Promise<Settled> {
  const { store, clock } = ctx;
  switch (outcome.type) {
    case 'deletion-started': {
      const now = ctx.now();
      const edit = await store.deletionAccepted(change, outcome.deletionId, { heldAt: now, notBefore: now + backoffDelay(ctx.backoff, 0, undefined, clock.random) / 4 });
      if (edit.changed.length) ctx.onChange(edit.changed);
      return 'later';
    }
    case 'deletion-pending':
      await store.laterAll([{ sent: change, hold: backoffHold(ctx, change.attempts) }]);
      return 'later';
    case 'deletion-failed': {
      // The server rolled the deletion back, so the subscription is back too (the view follows the base).
      const edit = await store.fail(change, { code: 'server', message: outcome.message });
      ctx.onChange(edit.changed);
      return 'failed';
    }
    case 'error':
      return settleError(ctx, change, outcome.error);
  }
  return 'deferred';
}

/** Decide what an error means for a change, and record it. */
async function settleError(ctx: PushContext, change: StoredChange, error: SyncError): Promise<Settled> {
  const { store, clock } = ctx;
  if (error.code === 'closed') return 'later';
  if (error.code === 'unauthorized') {
    ctx.onUnauthorized(error);
    return 'paused';
  }
  if (error.code === 'quota') throw error;
  if (error.code === 'bad-response' && error.status! >= 200 && error.status! < 300) {
    // A 2xx whose body is not the answer (a captive portal, a proxy) may not have reached the server at all.
    // Keep the change and send it again once a pull has reconciled what the server has (an add or a move waits
    // for that pull, see `mayGo`; a PATCH or a DELETE is harmless to repeat). The
    // backoff is firm: the pull succeeds (GETs may work), and a forced push after it would send the change
    // into the same answer at once, pull again, and spin.
    ctx.onNeedsPull();
    ctx.onError(error);
    const hold = backoffHold(ctx, change.attempts);
    await store.laterAll([{ sent: change, hold: { ...hold, serverHold: hold.notBefore }, lastError: errorInfo(error) }]);
    return 'later';
  }
  if (change.kind === 'remove' && (error.code === 'not-found' || error.code === 'gone') && change.state === 'queued') {
    // Nothing left to delete on the server: the deletion's goal is met.
    const edit = await store.ackDeleted(change, clock.now());
    ctx.onChange(edit.changed);
    return 'done';
  }
  if (change.state === 'deleting' && error.code === 'not-found') {
    // The server forgot the job: ask again (DELETE is safe to repeat).
    await store.patchChange(change, { state: 'queued', deletionId: undefined, notBefore: 0 });
    return 'later';
  }
  const edit = await store.fail(change, errorInfo(error));
  ctx.onChange(edit.changed);
  // Deleted on the server: the row must not wait for the next background pull to show it.
  if (error.code === 'gone') ctx.onNeedsPull();
  return 'failed';
}
