// One run: pull (for a sync), then push; and what a failed run means for the schedule and the status.
import { SyncError, isSyncError } from '../../src/errors.ts';
import { isTransient } from '../transient.ts';
import type { SyncReport } from '../../src/types.ts';
import { errorInfo } from '../error-info.ts';
import { isGatewayStatus } from '../http.ts';
import { push } from '../outbox.ts';
import { isClosedError } from '../store/store.ts';
import { SignedOut } from '../store/claim.ts';
import { runStore, whenBound } from './binding.ts';
import type { EngineContext } from './context.ts';
import { pullEpisodeState, pushEpisodeState } from './episodes.ts';
import { emitChange, emitStatus } from './events.ts';
import { pull } from './pull.ts';
import { background, cancelPullRetry, later, retryPullLater, schedulePush, skippedRuns } from './schedule.ts';
import { idlePhase, setPhase } from './status.ts';

/** Run a sync (pull then push) or a push; resolves with its report, rejects with the pull's error. */
export async function execute(ctx: EngineContext, kind: 'sync' | 'push', fromTimer = false): Promise<SyncReport> {
  const { state, work, clock } = ctx;
  const bindsNow = !ctx.bound;
  let epoch: string;
  try {
    const bound = await whenBound(ctx, fromTimer);
    // Cheap, and it binds the store again if another context cleared or deleted it under us (not needed on the
    // run that just bound it). Every read and write of the run then checks the store is still this one.
    epoch = bindsNow ? bound : await ctx.store.bind(ctx.binding, fromTimer);
  } catch (error) {
    // Signed out (a clear() here or in another tab): a timer's run leaves the store to the app's next use.
    if (error instanceof SignedOut) {
      const report: SyncReport = { pulled: 0, pushed: 0, failed: 0, pending: 0, requests: 0 };
      skippedRuns.add(report);
      return report;
    }
    throw error;
  }
  const store = runStore(ctx, epoch);
  ctx.runs.store = store;
  const report: SyncReport = { pulled: 0, pushed: 0, failed: 0, pending: 0, requests: 0 };
  const before = state.requests;
  let pullError: unknown;
  let pushErrors = 0;
  try {
    // The pages that held copies before this engine led may have gone and sent them: their changes count as
    // handed out. A change that waits for the server's word, or a hold left on the queue, makes this run a sync:
    // its pull probes the server and, answered, what waits goes at once.
    if (!work.tookOver) {
      if (await store.takeOver(clock.now(), ctx.steadyNow())) kind = 'sync';
      work.tookOver = true;
    }
    if (kind === 'sync' || work.needsPull || work.pullNext) {
      work.needsPull = work.pullNext = false;
      setPhase(ctx, 'pulling');
      try {
        report.pulled = await pull(ctx, store);
        if (ctx.transport.episodes) {
          const episodes = await pullEpisodeState(ctx, store);
          report.episodesPulled = episodes.pulled;
          report.episodesSkipped = episodes.skipped;
        }
        work.pullFailures = 0;
        cancelPullRetry(ctx);
      } catch (error) {
        pullError = handleRunError(ctx, error);
      } finally {
        state.progress = undefined;
      }
    }
    if (!state.authPaused && !state.closed && state.browserOnline) {
      ctx.runs.pushStarted = true;
      setPhase(ctx, 'pushing');
      const hooks = {
        halted: () => state.closed || state.authPaused || !state.browserOnline,
        onUnauthorized: (error: SyncError) => {
          pushErrors++;
          pause(ctx, error);
        },
        onError: (error: SyncError) => {
          pushErrors++;
          state.lastError = errorInfo(error);
          noteUnreachable(ctx, error);
        },
      };
      const result = await push({
        transport: ctx.transport,
        store,
        clock,
        now: ctx.steadyNow,
        // A sync's pull that just succeeded proves the server answers: changes waiting out a backoff go now. (Not a
        // push's pull for a change's sake: against a server that answers reads but refuses writes, every edit
        // would send the held change again.)
        force: kind == 'sync' && !pullError,
        // The options hold the backoff's settings (`baseDelay`, `maxDelay`) as they are.
        backoff: ctx.opts,
        concurrency: ctx.opts.concurrency,
        inFlight: work.inFlight,
        by: ctx.opts.by,
        ...hooks,
        onNeedsPull: () => {
          work.needsPull = true;
        },
        onChange: (guids) => emitChange(ctx, guids),
        onQueue: () => emitChange(ctx, [], true),
      });
      // Until a pull: a push that did not try it again says nothing of the server since.
      if (result.pullNext) work.pullNext = true;
      report.pushed = result.pushed;
      report.failed = result.failed;
      // Listening state after subscriptions: an episode of a feed subscribed in this push may go in the same run.
      const flush = kind === 'sync' || !!work.flushEpisodes;
      work.flushEpisodes = false;
      const episodes = await pushEpisodeState(ctx, store, flush, hooks);
      report.episodesPushed = episodes.pushed;
      const wakeAt = Math.min(result.wakeAt ?? Infinity, episodes.wakeAt ?? Infinity);
      // A change waiting for the server's word after a pull that failed waits for the pull's own retry (a sync).
      if (wakeAt !== Infinity && !(pullError && work.pullNext)) schedulePush(ctx, Math.max(0, wakeAt - ctx.steadyNow()));
    }
  } catch (error) {
    pullError ??= handleRunError(ctx, error);
  } finally {
    ctx.runs.store = undefined;
    report.requests = state.requests - before;
    if (!state.closed) setPhase(ctx, idlePhase(ctx));
  }
  if (work.needsPull) later(ctx, 0, () => background(ctx, 'sync'));
  // Read as the store is now (another context may have cleared it): the report says what is there.
  const { store: now } = ctx;
  const [counts, cursor] = await now.together(() => Promise.all([now.counts(), now.cursor()])).catch(() => [{ pending: 0 }, undefined] as const);
  report.pending = counts.pending;
  if (cursor !== undefined) report.cursor = new Date(cursor).toISOString();
  if (pullError) throw pullError;
  // A run that talked to the server without trouble makes the last error history.
  if (pushErrors === 0 && report.requests > 0) state.lastError = undefined;
  if (kind === 'sync' && pushErrors === 0) await store.setLastSuccess(clock.now()).catch(() => undefined);
  emitStatus(ctx);
  return report;
}

/** A request that got no answer from the server (none at all, or a gateway's 502/503/504) is the only sign of connectivity a worker can trust. */
export function noteUnreachable(ctx: EngineContext, error: SyncError): void {
  if (error.code === 'network' || error.code === 'timeout' || isGatewayStatus(error.status)) ctx.state.reachable = false;
}

/** Pause the queue until new credentials come (401/403). */
export function pause(ctx: EngineContext, error: SyncError): void {
  ctx.state.authPaused = true;
  ctx.state.lastError = errorInfo(error);
  setPhase(ctx, 'auth-required');
}

/** Record a failed run; schedule a retry for transient trouble. Returns the error to throw. */
function handleRunError(ctx: EngineContext, error: unknown): unknown {
  if (isClosedError(error) || ctx.state.closed) return new SyncError('closed', 'the engine or its database was closed', { cause: error });
  ctx.state.lastError = errorInfo(error);
  if (isSyncError(error)) {
    if (error.code === 'unauthorized') pause(ctx, error);
    else if (isTransient(error)) {
      noteUnreachable(ctx, error);
      retryPullLater(ctx, error.retryAfter);
    }
  }
  emitStatus(ctx);
  return error;
}
