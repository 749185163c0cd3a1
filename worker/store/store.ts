// The local database: every read and every atomic edit the engine makes. Network I/O never happens here.
import type { SyncDatabase } from '../../src/schema.ts';
import type { EpisodeRef } from '../../src/types.ts';
import { createAcks } from './acks.ts';
import type { Guard } from './claim.ts';
import { createStoreCore, type StoreCore } from './core.ts';
import { createEpisodeStore } from '../episodes/store.ts';
import { createEdits } from './edits.ts';
import { createMeta } from './meta.ts';
import { createPullWrites } from './pull-writes.ts';
import { createReads } from './reads.ts';

export type { Binding, Guard } from './claim.ts';
export type { FreshPull } from './core.ts';
export { isClosedError, storageError } from './core.ts';

function parts(core: StoreCore, newGuid: () => string) {
  return {
    db: core.db,
    ...createMeta(core),
    ...createReads(core),
    ...createEdits(core, newGuid),
    ...createAcks(core),
    ...createPullWrites(core),
    /** Listening state (episodes). */
    episodes: createEpisodeStore(core),
  };
}

/** The engine's view of the database. */
export interface Store extends ReturnType<typeof parts> {
  /** The same store whose every transaction checks `guard` (whose store it is) inside itself. */
  guarded(guard: Guard): Store;
}

/**
 * Create the store over an (unopened) database; `newGuid` names local adds the server has not named yet,
 * `onMoved` hears of episodes an edit moved with their feed's URL (once committed).
 */
export function createStore(db: SyncDatabase, newGuid: () => string, onMoved?: (episodes: EpisodeRef[]) => void): Store {
  const over = (core: StoreCore): Store => ({ ...parts(core, newGuid), guarded: (guard) => over(core.guarded(guard)) });
  return over(createStoreCore(db, undefined, onMoved));
}
