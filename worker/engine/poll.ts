// Fresh while the page is shown: a pull every `pullInterval` ms while this tab's page is visible, and on
// becoming visible or focused. The leader pulls; a follower whose page is shown asks the leader (whose own
// page may be hidden), so a hidden page never polls, and a shown one is never left stale. However many tabs
// ask, and whatever asks (a tick, focus, visibility), the leader pulls at most once per `pullInterval`: a
// request joins the running pull or the next one, so the server's load does not grow with the tabs.
import { monotonicNow } from '../clock.ts';
import type { EngineContext } from './context.ts';
import { background, later } from './schedule.ts';

/** Pull soon: in the leader tab, no sooner than `pullInterval` after the last pull began; requests meanwhile join it. */
export function pullSoon(ctx: EngineContext): void {
  const { runs } = ctx;
  if (!ctx.leadership.isLeader) return ctx.channel.post({ type: 'pull' });
  // Monotonic: a device clock stepping back must not hold the next pull off.
  const now = monotonicNow(ctx.clock);
  const last = runs.pullAt ?? -Infinity;
  // Later than now: a pull is set already, and this request joins it.
  if (last > now) return;
  runs.pullAt = Math.max(now, last + ctx.opts.pullInterval);
  later(ctx, runs.pullAt - now, () => background(ctx, 'sync'));
}

/** Tick every `pullInterval` ms until `close()` (its timers are the engine's); a tick pulls while the page is visible. */
export function startPolling(ctx: EngineContext, tick = false): void {
  if (ctx.opts.pullInterval <= 0) return;
  // In Node a pending tick must not keep the process alive.
  (later(ctx, ctx.opts.pullInterval, () => startPolling(ctx, true)) as { unref?: () => void } | undefined)?.unref?.();
  if (tick && ctx.state.visible) pullSoon(ctx);
}
