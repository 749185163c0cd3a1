// `sync()` as the app asks for it: checked here, run by the tab that leads (a follower's goes to the leader over
// the tabs' channel, and runs here once this tab leads if nobody answered it).
import { SyncError } from '../../src/errors.ts';
import type { SyncReport } from '../../src/types.ts';
import { whenBound } from './binding.ts';
import type { EngineContext } from './context.ts';
import { alive, typed } from './guards.ts';
import { later, requestSync } from './schedule.ts';

/** `sync()`: run now here when leading, else in the leader tab. */
export async function sync(ctx: EngineContext): Promise<SyncReport> {
  alive(ctx);
  await typed(() => whenBound(ctx));
  if (!ctx.state.browserOnline) throw new SyncError('offline', 'the page reports no network; changes stay queued');
  if (ctx.state.authPaused) throw new SyncError('unauthorized', 'paused after the server refused the credentials: call setAuth() with new ones', { status: 401 });
  if (!ctx.leadership.isLeader) return forwardSync(ctx);
  return requestSync(ctx);
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
