// The store belongs to one server, account and protocol. A sync or a local edit claims it (binds an unbound
// store); a read claims nothing; each part of the engine reaches the store through the guard that says so.
import type { Store } from './store.ts';
import type { EngineContext } from './context.ts';

/**
 * Claims the store for this engine; resolves with its epoch, rejects with `account-mismatch` (not kept: a later
 * try checks again). A `background` claim (a timer's run) takes no store a `clear()` signed out (`SignedOut`).
 */
export function whenBound(ctx: EngineContext, background = false): Promise<string> {
  if (!ctx.bound && background) return ctx.store.bind(ctx.binding, true);
  if (!ctx.bound) {
    const bound = ctx.store.bind(ctx.binding);
    ctx.bound = bound;
    bound.catch(() => {
      if (ctx.bound === bound) ctx.bound = undefined;
    });
  }
  return ctx.bound;
}

/** The store as the app's reads see it: another's store is refused, an unbound one is read and claimed by no one. */
export function reader(ctx: EngineContext): Store {
  return ctx.store.guarded({ kind: 'read', binding: ctx.binding });
}

/** The store as the app's edits write it: an unbound store becomes this engine's in the edit's own transaction. */
export function writer(ctx: EngineContext): Store {
  return ctx.store.guarded({ kind: 'claim', binding: ctx.binding });
}

/** The store as one run sees it: the one it began with (`epoch`); once wiped or taken, the run reads and writes nothing. */
export function runStore(ctx: EngineContext, epoch: string): Store {
  return ctx.store.guarded({ kind: 'run', binding: ctx.binding, epoch });
}
