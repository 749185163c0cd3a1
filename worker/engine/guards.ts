// What every public call checks first: the engine is open, and storage failures come out typed.
import { SyncError } from '../../src/errors.ts';
import type { EngineContext } from './context.ts';
import { storageError } from './store.ts';

/** Refuse a call on a closed engine. */
export function alive(ctx: EngineContext): void {
  if (ctx.state.closed) throw new SyncError('closed', 'the engine is closed');
}

/** Storage failures reach the app as `SyncError`s (`closed`, `quota`, `storage`), whichever step of the store hit them. */
export async function typed<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw storageError(error);
  }
}
