// Events to the app (and to the other tabs): `change` at once, `status` coalesced.
import type { ChangeEvent, Listener, SyncEvents } from '../../src/types.ts';
import type { EngineContext } from './context.ts';
import { snapshot } from './snapshot.ts';

/** ms over which status events are coalesced. */
const STATUS_THROTTLE = 25;
/**
 * While a run is under way: each status reads the queue counts and the cursor, and those reads queue behind
 * (and ahead of) the run's writes; ten progress events a second are plenty for a progress bar.
 */
const RUN_STATUS_THROTTLE = 100;

/** Deliver an event to this context's listeners. */
export function emit<E extends keyof SyncEvents>(ctx: EngineContext, event: E, payload: SyncEvents[E]): void {
  for (const listener of ctx.listeners[event] as Set<Listener<E>>) {
    try {
      listener(payload);
    } catch (error) {
      // A listener's bug must not break sync; surface it where developers look.
      console.error('opa-sync: a listener threw', error);
    }
  }
}

/** Tell this context and the other tabs which guids changed (and whether the queue did). */
export function emitChange(ctx: EngineContext, guids: string[], queue = false): void {
  if (!guids.length && !queue) return;
  const event: ChangeEvent = queue ? { guids, queue } : { guids };
  emit(ctx, 'change', event);
  ctx.channel.post({ type: 'change', ...event });
  emitStatus(ctx);
}

/** Queue a status event; a pull of thousands of pages must not read the counts thousands of times. */
export function emitStatus(ctx: EngineContext): void {
  if (ctx.statusQueued || ctx.state.closed) return;
  ctx.statusQueued = true;
  ctx.clock.setTimeout(() => {
    ctx.statusQueued = false;
    if (ctx.state.closed) return;
    snapshot(ctx).then(
      (status) => {
        emit(ctx, 'status', status);
        if (ctx.leadership.isLeader) ctx.channel.post({ type: 'status', status });
      },
      () => undefined,
    );
  }, ctx.runs.running ? RUN_STATUS_THROTTLE : STATUS_THROTTLE);
}
