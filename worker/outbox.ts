// Push: send queued changes through the transport, one at a time per subscription, and settle each outcome
// in the store. Which requests carry them is the transport's business; what an answer means is decided here.
import { SyncError } from '../src/errors.ts';
import { isTransient } from './transient.ts';
import type { Handout, StoredChange } from '../src/schema.ts';
import type { Clock } from '../src/types.ts';
import { backoffDelay, type Backoff } from './backoff.ts';
import { errorInfo } from './error-info.ts';
import { dueAt, isReady, type Hold } from './hold.ts';
import type { Ack, Wait } from './store/acks.ts';
import { harmless } from './store/delivery.ts';
import type { Store } from './store/store.ts';
import type { SendOutcome, Transport } from './transport.ts';

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
  /** Steady device time (`PushContext.now`) of the earliest change waiting for a retry, if any. */
  wakeAt?: number;
  /** Whether a change that may have reached the server failed in this run (its retry pulls first, see `markSent`). */
  pullNext?: boolean;
}

/** Where a change stands after one attempt; `deferred` was not sent (not an attempt). */
type Settled = 'done' | 'failed' | 'later' | 'paused' | 'deferred';

/** The first live change of each subscription (order per subscription is kept by sending only heads). */
export function heads(changes: StoredChange[]): StoredChange[] {
  const byRow = new Map<string, StoredChange>();
  for (const change of changes) if (!byRow.has(change.guid)) byRow.set(change.guid, change);
  return [...byRow.values()];
}

/** An update that only sets the subscribed flag: the server entity it addresses is the same after it. */
const flagOnly = (c: StoredChange) => c.kind === 'update' && c.state === 'queued' && c.change?.feedUrl === undefined && c.change?.guid === undefined;

/**
 * The heads, each followed (when it and they only set the flag) by the flag changes queued behind it: one
 * request of a batching protocol carries them in order, the last one's word winning. A change queued behind
 * one that was in flight when it was made would otherwise cost an upload of its own.
 */
export function withFollowers(changes: StoredChange[], chosen: StoredChange[], open: (c: StoredChange) => boolean): StoredChange[] {
  const heads = new Set(chosen.filter(flagOnly).map((c) => c.guid));
  const out = [...chosen];
  const cut = new Set<string>();
  const seen = new Set<string>();
  for (const change of changes) {
    const first = !seen.has(change.guid);
    seen.add(change.guid);
    if (first || !heads.has(change.guid) || cut.has(change.guid)) continue;
    if (flagOnly(change) && open(change)) out.push(change);
    else cut.add(change.guid);
  }
  return out;
}

/** Send everything that is due; resolves when nothing due is left. */
export async function push(ctx: PushContext): Promise<PushResult> {
  const result: PushResult = { pushed: 0, failed: 0 };
  const attempted = new Set<number>();
  const count = (settled: Settled) => {
    if (settled === 'done') result.pushed++;
    if (settled === 'failed') result.failed++;
  };
  // Whether the server answered a request of this run: it is back, so what waits out a backoff of its own goes.
  let answered = false;
  for (;;) {
    if (ctx.halted()) return result;
    const pending = await ctx.store.pendingChanges();
    const all = heads(pending);
    const now = ctx.now();
    // Once the server answered in this run it is back: what waits out a backoff of its own goes (never a server hold).
    const ready = (c: StoredChange) => isReady(c, now, ctx.force === true || answered);
    // One attempt per change per run: a change failing faster than its backoff must not spin this run.
    const open = (c: StoredChange) => !ctx.inFlight.has(c.id!) && !attempted.has(c.id!);
    let due = all.filter((c) => ready(c) && open(c));
    // A push that goes carries every queued change, due or not: a backoff delays the request, not a change's place
    // in it (a server hold stays; a deletion job is polled on its own time).
    if (due.length) due = all.filter((c) => open(c) && (ready(c) || (c.state === 'queued' && isReady(c, now, true))));
    // A batching protocol's request also carries the flag changes queued behind each head it sends.
    if (ctx.transport.batching === 'all') due = withFollowers(pending, due, open);
    // In flight from here, before any await: an edit made meanwhile queues behind it instead of folding into a
    // copy already on its way (which would then be sent twice), and no other request takes it.
    for (const c of due) {
      attempted.add(c.id!);
      ctx.inFlight.add(c.id!);
    }
    const waiting = all.filter((c) => !due.includes(c) && !ctx.inFlight.has(c.id!));
    // A change already tried in this run goes again in a later run, never sooner than its own time.
    result.wakeAt = waiting.length ? Math.min(...waiting.map((c) => dueAt(c, now))) : undefined;
    result.pullNext = waiting.some((c) => c.sent && !harmless(c) && attempted.has(c.id!));
    if (!due.length) return result;
    const taken = due;
    try {
      // Handed out before they leave: one that may have reached the server is never folded away or into (a
      // second move of a gPodder feed does not compose with the first: the middle URL would stay subscribed).
      // One not harmless to repeat waits for a pull; an add whose feed the server changed since is settled by
      // the server's word (see `markSent`).
      const marked = await ctx.store.markSent(due, ctx.by, ctx.clock.now());
      due = marked.result;
      if (marked.changed.length) {
        ctx.onChange(marked.changed);
        ctx.onQueue();
      }
      if (ctx.transport.batching === 'all') {
        const settled = await sendBatch(ctx, due);
        settled.forEach((s, i) => (s === 'deferred' ? attempted.delete(due[i]!.id!) : count(s)));
        answered ||= settled.includes('done');
        continue;
      }
      const units = requests(due, ctx.transport.addsPerRequest ?? 1);
      let cursor = 0;
      const worker = async () => {
        while (cursor < units.length && !ctx.halted()) (await sendBatch(ctx, units[cursor++]!)).forEach(count);
      };
      await Promise.all(Array.from({ length: Math.min(ctx.concurrency, units.length) }, worker));
    } finally {
      // What was not sent (halted, or gone from the queue) is free again.
      for (const c of taken) ctx.inFlight.delete(c.id!);
    }
  }
}

/** The changes each request of a protocol that sends them one each carries: adds `size` at a time, the rest alone. */
function requests(due: StoredChange[], size: number): StoredChange[][] {
  const out: StoredChange[][] = [];
  let adds: StoredChange[] = [];
  for (const c of due) {
    if (c.kind !== 'add' || size < 2) out.push([c]);
    else {
      if (!adds.length || adds.length >= size) out.push((adds = []));
      adds.push(c);
    }
  }
  return out;
}

/** Send changes (marked in flight by the caller) in one transport call and settle each outcome. */
async function sendBatch(ctx: PushContext, changes: StoredChange[]): Promise<Settled[]> {
  try {
    const items = await ctx.store.sendItems(changes);
    const outcomes = await ctx.transport.send(items);
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
  changes.forEach((sent, i) => {
    const outcome = outcomes[i]!;
    if (outcome.type === 'added' || outcome.type === 'updated') acks.push({ sent, ...outcome });
    else if (outcome.type === 'deleted') acks.push({ sent, type: 'deleted', now: ctx.clock.now() });
    else if (outcome.type === 'error' && backsOff(outcome.error)) {
      errors.add(outcome.error);
      waits.push({ sent, hold: backoffHold(ctx, sent, outcome.error), lastError: errorInfo(outcome.error) });
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

/** Whether an error means "try again after a backoff" (trouble on the way or at the server, not a refusal). */
function backsOff(error: SyncError): boolean {
  if (error.code === 'closed' || error.code === 'unauthorized' || error.code === 'quota') return false;
  if (error.code === 'bad-response' && error.status !== undefined && error.status >= 200 && error.status < 300) return false;
  return isTransient(error);
}

/** The wait a change takes after a transient error: its own backoff, and the server's Retry-After as a hold of its own. */
function backoffHold(ctx: PushContext, change: StoredChange, error: SyncError): Hold {
  const now = ctx.now();
  const notBefore = now + backoffDelay(ctx.backoff, change.attempts, error.retryAfter, ctx.clock.random);
  return { heldAt: now, notBefore, ...(error.retryAfter === undefined ? {} : { serverHold: now + error.retryAfter }) };
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
    case 'deletion-pending': {
      const now = ctx.now();
      await store.laterAll([{ sent: change, hold: { heldAt: now, notBefore: now + backoffDelay(ctx.backoff, change.attempts, undefined, clock.random) } }]);
      return 'later';
    }
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
  if (error.code === 'bad-response' && error.status !== undefined && error.status >= 200 && error.status < 300) {
    // A 2xx whose body is not the answer (a captive portal, a proxy) may not have reached the server at all.
    // Keep the change and send it again once a pull has reconciled what the server has (an add or a move waits
    // for that pull, see `mayGo`; a PATCH or a DELETE is harmless to repeat). The
    // backoff is firm: the pull succeeds (GETs may work), and a forced push after it would send the change
    // into the same answer at once, pull again, and spin.
    ctx.onNeedsPull();
    ctx.onError(error);
    const now = ctx.now();
    const notBefore = now + backoffDelay(ctx.backoff, change.attempts, undefined, clock.random);
    await store.laterAll([{ sent: change, hold: { heldAt: now, notBefore, serverHold: notBefore }, lastError: errorInfo(error) }]);
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
