// The other tabs: their changes and status reach this one, and a follower's `sync()` runs in the leader.
import { SyncError } from '../../src/errors.ts';
import type { SyncReport } from '../../src/types.ts';
import type { ChannelMessage } from '../channel.ts';
import { errorInfo } from '../error-info.ts';
import type { EngineContext } from './context.ts';
import { emit, emitStatus } from './events.ts';
import { sync } from './api.ts';
import { pullSoon } from './poll.ts';
import { later, requestSync, schedulePush } from './schedule.ts';

/** Handle a message from another context of the same database. */
export function onMessage(ctx: EngineContext, message: ChannelMessage): void {
  const { state, leadership, channel, runs } = ctx;
  if (state.closed) return;
  switch (message.type) {
    case 'change':
      emit(ctx, 'change', {
        guids: message.guids,
        ...(message.queue ? { queue: true as const } : {}),
        ...(message.episodes ? { episodes: message.episodes } : {}),
      });
      emitStatus(ctx);
      break;
    case 'pull':
      if (leadership.isLeader) pullSoon(ctx);
      break;
    case 'queued':
      if (leadership.isLeader) schedulePush(ctx);
      emitStatus(ctx);
      break;
    case 'status':
      state.leaderStatus = message.status;
      if (!leadership.isLeader) emitStatus(ctx);
      break;
    case 'hello':
      // Its status (posted to the other tabs) tells the newcomer that a tab syncs and which one.
      if (leadership.isLeader) emitStatus(ctx);
      break;
    case 'sync-request':
      if (leadership.isLeader) {
        sync(ctx).then(
          (report) => channel.post({ type: 'sync-result', id: message.id, report }),
          (error) => channel.post({ type: 'sync-result', id: message.id, error: errorInfo(error) }),
        );
      }
      break;
    case 'sync-result': {
      const waiter = runs.forwarded.get(message.id);
      if (!runs.forwarded.delete(message.id)) break;
      const e = message.error;
      // The error as the leader had it (its status, when it has one: the constructor leaves an absent one out).
      if (e) waiter!.reject(new SyncError(e.code, e.message, e));
      else waiter!.resolve(message.report!);
      break;
    }
  }
}

/** Ask the leader tab to sync, and wait for its report. */
export function forwardSync(ctx: EngineContext): Promise<SyncReport> {
  const id = crypto.randomUUID();
  return new Promise<SyncReport>((resolve, reject) => {
    ctx.runs.forwarded.set(id, { resolve, reject });
    ctx.channel.post({ type: 'sync-request', id });
    later(ctx, ctx.opts.timeout * 4, () => {
      if (!ctx.runs.forwarded.delete(id)) return;
      reject(new SyncError('timeout', 'the tab that syncs did not answer'));
    });
  });
}

/**
 * This context leads now: a `sync()` it forwarded while it waited for leadership runs here. Nobody else may
 * answer it: the lock may have been free all along, only granted after the call (a busy browser grants it
 * late), or the leader that was asked has gone.
 */
export function runForwardedHere(ctx: EngineContext): void {
  const waiting = [...ctx.runs.forwarded.values()];
  ctx.runs.forwarded.clear();
  for (const waiter of waiting) requestSync(ctx).then(waiter.resolve, waiter.reject);
}
