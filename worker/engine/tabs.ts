// The other tabs: their changes and status reach this one, and a follower's `sync()` runs in the leader.
import { SyncError } from '../../src/errors.ts';
import type { SyncReport } from '../../src/types.ts';
import type { ChannelMessage } from '../channel.ts';
import { errorInfo } from '../error-info.ts';
import type { EngineContext } from './context.ts';
import { emit, emitStatus } from './events.ts';
import { sync } from './sync.ts';
import { pullSoon } from './poll.ts';
import { schedulePush } from './schedule.ts';

/** Handle a message from another context of the same database. */
export function onMessage(ctx: EngineContext, message: ChannelMessage): void {
  const { state, leadership, channel, runs } = ctx;
  if (state.closed) return;
  switch (message.type) {
    case 'change': {
      // The event as the other context emitted it (it posts it as is: see `emitChange`, `emitEpisodes`).
      const { type, ...change } = message;
      emit(ctx, 'change', change);
      emitStatus(ctx);
      break;
    }
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
