// A pull through the transport into the store: the sink the transport writes to.
import type { FreshPull } from '../store/store.ts';
import type { PullSink } from '../transport.ts';
import type { EngineContext } from './context.ts';
import { emitChange, emitStatus } from './events.ts';

/** Pull what changed since the cursor; resolves with the number of local views that changed. */
export async function pull(ctx: EngineContext): Promise<number> {
  const { store } = ctx;
  const [cursor, tail, epoch] = await Promise.all([store.cursor(), store.tail(), store.epoch()]);
  const empty = cursor === undefined && (await store.isEmpty());
  // A pull into an empty store knows that only what it wrote itself can exist (see `createWorkset`).
  const fresh: FreshPull | undefined = empty ? { written: new Set() } : undefined;
  let applied = 0;
  const sink: PullSink = {
    cursor,
    tail,
    empty,
    async apply(entries, complete) {
      const { result: committed, changed } = await store.applyEntries(entries, complete && { ...complete, epoch }, fresh);
      applied += changed.length;
      if (changed.length) emitChange(ctx, changed);
      return committed;
    },
    progress(progress) {
      ctx.state.progress = progress;
      emitStatus(ctx);
    },
  };
  await ctx.transport.pull(sink);
  return applied;
}
