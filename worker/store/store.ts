// The local database: every read and every atomic edit the engine makes. Network I/O never happens here.
import type { SyncDatabase } from '../../src/schema.ts';
import { createAcks } from './acks.ts';
import type { Guard } from './claim.ts';
import { createStoreCore, type FeedMoveHooks, type StoreCore } from './core.ts';
import { createEdits } from './edits.ts';
import { createMeta } from './meta.ts';
import { createPullWrites } from './pull-writes.ts';
import { createReads } from './reads.ts';

export type { Binding, Guard } from './claim.ts';
export type { FeedMoveHooks, FreshPull, StoreCore } from './core.ts';
export { isClosedError, storageError } from './core.ts';

function parts(core: StoreCore, newGuid: () => string) {
  const reads = createReads(core);
  return {
    db: core.db,
    ...createMeta(core),
    ...reads,
    ...createEdits(core, newGuid),
    ...createAcks(core, reads),
    ...createPullWrites(core),
  };
}

/** The engine's view of the database, with the parts `more` adds (the engine's listening state: engine/store.ts). */
export type Store<More extends object = object> = ReturnType<typeof parts> &
  More & {
    /** The same store whose every transaction checks `guard` (whose store it is) inside itself. */
    guarded(guard: Guard): Store<More>;
  };

/** What the floor above adds to the store: parts over the same core (and guard), and what follows a feed that moves. */
export interface StoreExtension<More extends object> extends FeedMoveHooks {
  parts?(core: StoreCore): More;
}

/**
 * Create the store over an (unopened) database; `newGuid` names local adds the server has not named yet,
 * `extension` adds the parts of the floor above and is told of feeds a unit of work moved.
 */
export function createStore<More extends object = object>(db: SyncDatabase, newGuid: () => string, extension: StoreExtension<More> = {}): Store<More> {
  const over = (core: StoreCore): Store<More> => ({ ...parts(core, newGuid), ...(extension.parts?.(core) as More), guarded: (guard) => over(core.guarded(guard)) });
  return over(createStoreCore(db, undefined, extension));
}
