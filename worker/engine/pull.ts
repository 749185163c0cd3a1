// A pull through the transport into the store: the sink the transport writes to.
import type { FreshPull, Store } from '../store/store.ts';
import type { PullSink } from '../transport.ts';
import type { EngineContext } from './context.ts';
import { emitChange, emitStatus } from './events.ts';

/** Settles once both have; rejects with the first one's error, else the second's. */
function settled(first: Promise<void>, second: Promise<void>): Promise<void> {
  const fail = (error: unknown) => second.then(() => Promise.reject(error), () => Promise.reject(error));
  return first.then(() => second, fail);
}

/** Pull what changed since the cursor into `store` (the run's, see `runStore`); resolves with the number of local views that changed. */
export async function pull(ctx: EngineContext, store: Store): Promise<number> {
  const { cursor, tail, empty } = await store.pullStart();
  // A pull into an empty store knows that only what it wrote itself can exist (see `createWorkset`).
  const fresh: FreshPull | undefined = empty ? { written: new Map(), batches: 0 } : undefined;
  let applied = 0;
  // The batch before the newest one, still committing. A batch that does not complete the pull is queued
  // behind it and not waited for: its rows are computed and its writes issued while the one before commits,
  // so IndexedDB never idles between pages. At most two are outstanding; the completing batch (the cursor)
  // waits for every earlier one, so the cursor never commits past a batch that failed.
  let committing: Promise<void> = Promise.resolve();
  const write = async (entries: Parameters<PullSink['apply']>[0], complete: Parameters<PullSink['apply']>[1]) => {
    // A listing that restates rows may queue adds: they are stamped with this device's time.
    const completion = complete?.restate !== undefined ? { ...complete, now: ctx.clock.now() } : complete;
    const { result: committed, changed } = await store.applyEntries(entries, completion, fresh);
    applied += changed.length;
    if (changed.length) emitChange(ctx, changed, completion?.restate !== undefined);
    return committed;
  };
  const sink: PullSink = {
    cursor,
    tail,
    empty,
    async apply(entries, complete) {
      if (complete) {
        await committing;
        return write(entries, complete);
      }
      const before = committing;
      const batch = write(entries, undefined).then(() => undefined);
      // Observed here; its error surfaces at the next batch (or at the end of the pull).
      batch.catch(() => undefined);
      committing = settled(before, batch);
      // Observed at once too: it may fail while the transport fetches the next page (another tab's clear()),
      // before anything awaits it, and an unobserved rejection would surface as an unhandled one.
      committing.catch(() => undefined);
      await before;
      return false;
    },
    progress(progress) {
      ctx.state.progress = progress;
      emitStatus(ctx);
    },
  };
  try {
    await ctx.transport.pull(sink);
  } catch (error) {
    // Nothing of a failed pull still writes once it is over.
    await committing.catch(() => undefined);
    throw error;
  }
  // A transport that ends without a completing batch still owes the last batch's outcome.
  await committing;
  return applied;
}
