// The engine's store: the subscription store (store/) with listening state (episodes/) plugged in from above.
// A unit of work that moves a feed's URL reports it through the hook, and its episodes move in the same
// transaction; the store itself imports nothing from episodes/.
import type { SyncDatabase } from '../../src/schema.ts';
import type { EpisodeRef } from '../../src/types.ts';
import { moveEpisodes } from '../episodes/move.ts';
import { createEpisodeStore, type EpisodeStore } from '../episodes/store.ts';
import { createStore, type FeedMoveHooks, type Store as BaseStore } from '../store/store.ts';

export type { Binding, FreshPull, Guard } from '../store/store.ts';
export { isClosedError, storageError } from '../store/store.ts';

/** The store the engine's parts use: subscriptions, the queue, meta, and `episodes` (listening state). */
export type Store = BaseStore<{ episodes: EpisodeStore }>;

/**
 * Create the engine's store; `onMoved` hears of episodes an edit moved with their feed's URL (once committed),
 * `copy` is the page's last copy's build, where a page holds one (see `FeedMoveHooks.copy`), `copies` which changes it may carry.
 */
export function createEngineStore(db: SyncDatabase, newGuid: () => string, onMoved?: (episodes: EpisodeRef[]) => void, copy?: FeedMoveHooks['copy'], copies?: FeedMoveHooks['copies']): Store {
  return createStore(db, newGuid, {
    parts: (core) => ({ episodes: createEpisodeStore(core) }),
    feedsMoved: moveEpisodes,
    onMoved,
    copy,
    copies,
  });
}
