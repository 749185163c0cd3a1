// The status snapshot the app reads (and a follower tab relays from the leader).
import type { SyncStatus } from '../../src/types.ts';
import type { EngineContext } from './context.ts';
import { reader } from './binding.ts';

/** A snapshot of the engine's state; a follower tab reports what the leader is doing. */
export async function snapshot(ctx: EngineContext): Promise<SyncStatus> {
  const { state } = ctx;
  let counts = { pending: 0, failed: 0 };
  let pendingEpisodes = 0;
  let cursor: number | undefined;
  let lastSuccess: number | undefined;
  try {
    if (!state.closed) {
      // A read: it claims no store (an unbound one reads as empty), and refuses another's.
      const store = reader(ctx);
      // One transaction for the four: a snapshot follows most calls, and each transaction costs the worker more than its reads.
      [counts, cursor, lastSuccess, pendingEpisodes] = await store.together(() =>
        Promise.all([store.counts(), store.cursor(), store.lastSuccess(), store.episodes.pendingCount()]),
      );
    }
  } catch {
    // A closed or mismatched database: report what is known.
  }
  const leader = ctx.leadership.isLeader;
  // Starting, nothing has answered yet: not online.
  const network = !state.browserOnline ? 'offline' : state.reachable && state.phase !== 'starting' ? 'online' : 'unreachable';
  const mine: SyncStatus = {
    phase: state.closed ? 'closed' : state.phase,
    online: network === 'online',
    network,
    leader,
    pending: counts.pending,
    failed: counts.failed,
    pendingEpisodes,
  };
  if (cursor !== undefined) mine.cursor = new Date(cursor).toISOString();
  if (lastSuccess !== undefined) mine.lastSuccess = lastSuccess;
  if (state.lastError) mine.lastError = state.lastError;
  if (state.progress) mine.progress = state.progress;
  if (leader || !state.leaderStatus || state.closed) return mine;
  const fromLeader: SyncStatus = { ...state.leaderStatus, leader: false, pending: counts.pending, failed: counts.failed, pendingEpisodes };
  if (!state.browserOnline) Object.assign(fromLeader, { online: false, network: 'offline' });
  return fromLeader;
}
