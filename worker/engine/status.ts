// The engine's phase: what it is doing when no run is, and moving to another (the app hears of it).
import type { SyncPhase } from '../../src/types.ts';
import type { EngineContext } from './context.ts';
import { emitStatus } from './events.ts';

/** The phase when no run is going on. */
export function idlePhase(ctx: EngineContext): SyncPhase {
  const { state } = ctx;
  return state.closed ? 'closed' : state.authPaused ? 'auth-required' : !state.browserOnline ? 'offline' : state.reachable ? 'idle' : 'unreachable';
}

/** Move to a phase (and tell the app). */
export function setPhase(ctx: EngineContext, next: SyncPhase): void {
  if (ctx.state.phase === next) return;
  ctx.state.phase = next;
  emitStatus(ctx);
}
