// Fresh while the page is shown: a pull every `pullInterval` ms while this tab's page is visible, and on
// becoming visible or focused. The leader pulls; a follower whose page is shown asks the leader (whose own
// page may be hidden), so a hidden page never polls, and a shown one is never left stale.
import type { EngineContext } from './context.ts';
import { background } from './schedule.ts';

/** Pull now: here when leading, else in the leader tab. */
export function pullSoon(ctx: EngineContext): void {
  if (ctx.leadership.isLeader) background(ctx, 'sync');
  else ctx.channel.post({ type: 'pull' });
}

/** Tick every `pullInterval` ms (cleared by `close()` with the other timers); a tick pulls while the page is visible. */
export function startPolling(ctx: EngineContext): void {
  const { runs, opts, clock } = ctx;
  if (runs.interval !== undefined || opts.pullInterval <= 0 || ctx.state.closed) return;
  const tick = () => {
    runs.interval = clock.setTimeout(tick, opts.pullInterval);
    // In Node a pending interval must not keep the process alive.
    (runs.interval as { unref?: () => void }).unref?.();
    if (ctx.state.visible) pullSoon(ctx);
  };
  runs.interval = clock.setTimeout(tick, opts.pullInterval);
  (runs.interval as { unref?: () => void }).unref?.();
}
