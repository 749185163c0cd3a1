// When runs happen: the single-flight run, the push timer, the pull retry after trouble, the pull interval.
// Every timer is set on the engine's clock and cleared by `close()`.
import type { SyncReport } from '../../src/types.ts';
import { backoffDelay } from '../backoff.ts';
import { monotonicNow } from '../clock.ts';
import type { EngineContext, Waiter } from './context.ts';

/** Reports of timer runs that found the store signed out and did nothing (an app's sync() that joined one runs again). */
export const skippedRuns = new WeakSet<SyncReport>();

/** Run `fn` after `ms` on the engine's clock (tracked, so `close()` can cancel it). */
export function later(ctx: EngineContext, ms: number, fn: () => void): unknown {
  if (ctx.state.closed) return undefined;
  const { runs, clock } = ctx;
  // The clock clamps the delay (see `clampedTimers`): a past time runs at once.
  const timer = clock.setTimeout(() => {
    runs.timers.delete(timer);
    fn();
  }, ms);
  runs.timers.add(timer);
  return timer;
}

/** Cancel every timer (on close). */
export function cancelAll(ctx: EngineContext): void {
  for (const timer of ctx.runs.timers) ctx.clock.clearTimeout(timer);
  ctx.runs.timers.clear();
}

/** A pull that succeeded makes the pending pull retry pointless. */
export function cancelPullRetry(ctx: EngineContext): void {
  const { runs } = ctx;
  if (runs.pullRetry === undefined) return;
  ctx.clock.clearTimeout(runs.pullRetry);
  runs.timers.delete(runs.pullRetry);
  runs.pullRetry = undefined;
}

/** Pull again after transient trouble, with backoff (the server's Retry-After is a floor). */
export function retryPullLater(ctx: EngineContext, retryAfter: number | undefined): void {
  const { opts, work, clock } = ctx;
  work.pullFailures++;
  cancelPullRetry(ctx);
  // The options hold the backoff's settings (`baseDelay`, `maxDelay`) as they are.
  const delay = backoffDelay(opts, work.pullFailures - 1, retryAfter, clock.random);
  ctx.runs.pullRetry = later(ctx, delay, () => {
    ctx.runs.pullRetry = undefined;
    background(ctx, 'sync');
  });
}

/** Push after `delay` (bursts of edits coalesce); an earlier timer already set wins. */
export function schedulePush(ctx: EngineContext, delay = ctx.opts.pushDelay): void {
  const { runs } = ctx;
  if (ctx.state.closed || !ctx.leadership.isLeader) return;
  // Compared between calls only: a monotonic reading, so a device clock stepping between two cannot reorder them.
  const at = monotonicNow(ctx.clock) + delay;
  if (runs.pushTimerAt !== undefined && runs.pushTimerAt <= at) return;
  runs.pushTimerAt = at;
  later(ctx, delay, () => {
    if (runs.pushTimerAt !== at) return;
    runs.pushTimerAt = undefined;
    background(ctx, 'push');
  });
}

/** A run the engine starts itself: errors are recorded in status, never thrown at anyone. */
export function background(ctx: EngineContext, kind: 'sync' | 'push'): void {
  const { state, runs } = ctx;
  if (state.closed || !ctx.leadership.isLeader || !state.browserOnline || state.authPaused) return;
  if (kind === 'push') {
    if (runs.running) runs.pushAgain = true;
    else launch(ctx, 'push', true).catch(() => undefined);
    return;
  }
  requestSync(ctx, true).catch(() => undefined);
}

/** A sync run: join the running one while it is still pulling, else the next one. */
export function requestSync(ctx: EngineContext, fromTimer = false): Promise<SyncReport> {
  const { runs } = ctx;
  // Join a run only while it is still pulling: a later caller's changes must be in the push it waits for. A
  // timer's run that found the store signed out did nothing: the app's sync(), which binds it, runs on its own.
  if (runs.running && runs.runningKind === 'sync' && !runs.pushStarted) {
    return fromTimer ? runs.running : runs.running.then((report) => (skippedRuns.has(report) ? requestSync(ctx) : report));
  }
  if (runs.running) {
    // The next run is the app's (it may bind a signed-out store) as soon as one caller is the app.
    runs.nextBackground = (runs.nextSync ? runs.nextBackground : true) && fromTimer;
    runs.nextSync ??= deferred<SyncReport>();
    return runs.nextSync.promise;
  }
  return launch(ctx, 'sync', fromTimer);
}

function launch(ctx: EngineContext, kind: 'sync' | 'push', fromTimer: boolean): Promise<SyncReport> {
  const { runs } = ctx;
  runs.runningKind = kind;
  runs.pushStarted = false;
  // A pull already set for later stays set (an app's sync() meanwhile must not make `pullSoon` set a second one).
  if (kind === 'sync') runs.pullAt = Math.max(runs.pullAt ?? -Infinity, monotonicNow(ctx.clock));
  const run = ctx.execute(kind, fromTimer);
  runs.running = run;
  run
    .catch(() => undefined)
    .then(() => {
      if (runs.running !== run) return;
      runs.running = undefined;
      runs.runningKind = undefined;
      if (runs.nextSync) {
        const waiter = runs.nextSync;
        runs.nextSync = undefined;
        runs.pushAgain = false;
        launch(ctx, 'sync', runs.nextBackground).then(waiter.resolve, waiter.reject);
      } else if (runs.pushAgain) {
        runs.pushAgain = false;
        background(ctx, 'push');
      }
    });
  return run;
}

/** A promise with its settle functions. */
export function deferred<T>(): Waiter<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
