// The local database: every read and every atomic edit the engine makes. Network I/O never happens here.
import type { SyncDatabase } from '../../src/schema.ts';
import { createAcks } from './acks.ts';
import { createStoreCore } from './core.ts';
import { createEdits } from './edits.ts';
import { createMeta } from './meta.ts';
import { createPullWrites } from './pull-writes.ts';
import { createReads } from './reads.ts';

export type { Binding } from './meta.ts';
export type { FreshPull } from './core.ts';
export { isClosedError, storageError } from './core.ts';

/** The engine's view of the database. */
export type Store = ReturnType<typeof createStore>;

/** Create the store over an (unopened) database; `newGuid` names local adds the server has not named yet. */
export function createStore(db: SyncDatabase, newGuid: () => string) {
  const core = createStoreCore(db);
  return {
    db,
    ...createMeta(core),
    ...createReads(core),
    ...createEdits(core, newGuid),
    ...createAcks(core),
    ...createPullWrites(core),
  };
}
