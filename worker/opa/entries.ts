// Open Podcast API wire shapes to the engine's neutral ones (timestamps are read here, once).
import { parseTimestamp } from '../time.ts';
import type { AddedEntry, RemoteEntry, UpdateResult } from '../transport.ts';
import type { WireAddResult, WireSkipped, WireSubscription, WireUpdateResult } from './wire.ts';

const ms = (value: string | undefined): number => (value === undefined ? 0 : (parseTimestamp(value) ?? 0));

/** The newest of an entry's server times (ms). */
const atOf = (w: WireSkipped): number => Math.max(ms(w.subscription_changed), ms(w.guid_changed), ms(w.deleted));

/** `into` with the fields of `w` that `names` maps (wire name → engine name), those present only. */
function renamed<T extends object>(into: T, w: object, names: Record<string, string>): T {
  for (const [from, to] of Object.entries(names)) {
    const v = (w as Record<string, unknown>)[from];
    if (v !== undefined) (into as Record<string, unknown>)[to] = v;
  }
  return into;
}

/** A listed entry in the engine's terms. */
export function toRemoteEntry(w: WireSubscription): RemoteEntry {
  return renamed(
    { guid: w.guid, feedUrl: w.feed_url, isSubscribed: w.is_subscribed, at: atOf(w), dataAt: ms(w.subscription_changed) },
    w,
    { new_guid: 'newGuid', subscription_changed: 'subscriptionChanged', guid_changed: 'guidChanged', deleted: 'deleted' },
  );
}

/** What a drain counts of a skipped entry: the guids it was listed under and its server time. */
export interface ListedOnly {
  guid: string;
  newGuid?: string;
  at: number;
}

/** A skipped entry as the drain counts it (never stored). */
export function toListedOnly(w: WireSkipped): ListedOnly {
  return renamed({ guid: w.guid, at: atOf(w) }, w, { new_guid: 'newGuid' });
}

/** One added entry of a POST answer in the engine's terms. */
export function toAddedEntry(w: WireAddResult['success'][number]): AddedEntry {
  return renamed({ guid: w.guid, feedUrl: w.feed_url, isSubscribed: w.is_subscribed }, w, { subscription_changed: 'subscriptionChanged' });
}

/** A PATCH answer in the engine's terms. */
export function toUpdateResult(w: WireUpdateResult): UpdateResult {
  return renamed({}, w, {
    new_feed_url: 'feedUrl',
    is_subscribed: 'isSubscribed',
    subscription_changed: 'subscriptionChanged',
    new_guid: 'newGuid',
    guid_changed: 'guidChanged',
  });
}
