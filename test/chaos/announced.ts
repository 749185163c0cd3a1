// update() as the soak calls it, telling whether it wrote anything: an update equal to the engine's local view
// queues, sends and announces nothing (issue 25), so it is not a write for the intent log.
import type { Subscription, SubscriptionChange } from '../../src/types.ts';
import type { SyncEngine } from '../../worker/index.ts';

/** What `announcedUpdate` resolves with: the view, and whether the engine announced a change of the row during the call. */
export interface AnnouncedUpdate {
  view: Subscription;
  wrote: boolean;
}

/**
 * `e.update(handle, change)`, listening for its `change` event (emitted before update() resolves, for every edit
 * that wrote). One for the row from a pull committing meanwhile counts too: then a no-op is taken as a write, the
 * stricter reading.
 */
export async function announcedUpdate(e: SyncEngine, handle: string, change: SubscriptionChange): Promise<AnnouncedUpdate> {
  const seen = new Set<string>();
  const off = e.on('change', (event) => event.guids.forEach((g) => seen.add(g)));
  try {
    const view = await e.update(handle, change);
    return { view, wrote: seen.has(view.guid) || seen.has(handle) };
  } finally {
    off();
  }
}

/**
 * The fields of `change` no queued change of the row carries once update() resolved: the edit folded a queued
 * change back to the engine's base, which then leaves the queue (issue 25). The base may be older than the
 * server (another device's change not pulled yet): the app's toggles then net to nothing and that change stands.
 * A change acknowledged between the two calls reads as folded back too (the looser reading).
 */
export async function foldedBack(e: SyncEngine, guid: string, change: SubscriptionChange): Promise<('feedUrl' | 'isSubscribed' | 'guid')[]> {
  const queued = (await e.pending()).filter((p) => p.guid === guid);
  const carries = (field: 'feedUrl' | 'isSubscribed' | 'guid') =>
    queued.some((p) => (p.kind === 'update' && p.change?.[field] !== undefined) || (p.kind === 'add' && field !== 'guid'));
  return (['feedUrl', 'isSubscribed', 'guid'] as const).filter((field) => change[field] !== undefined && !carries(field));
}
