// The store belongs to one server, account and protocol; it is checked (or claimed) on first use.
import type { EngineContext } from './context.ts';

/** Resolves once the store is bound to this engine's server; rejects with `account-mismatch` otherwise. */
export function whenBound(ctx: EngineContext): Promise<void> {
  if (!ctx.bound) {
    ctx.bound = ctx.store.bind(ctx.binding);
    ctx.bound.catch(() => undefined);
  }
  return ctx.bound;
}
