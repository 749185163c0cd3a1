// Open Podcast API wire shapes to the engine's neutral ones (timestamps are read here, once).
import { parseTimestamp } from '../time.ts';
import type { AddedEntry, RemoteEntry, UpdateResult } from '../transport.ts';
import type { WireAddResult, WireSkipped, WireSubscription, WireUpdateResult } from './wire.ts';

const ms = (value: string | undefined): number => (value === undefined ? 0 : (parseTimestamp(value) ?? 0));

/** The newest of an entry's server times (ms). */
const atOf = (w: WireSkipped): number => Math.max(ms(w.subscription_changed), ms(w.guid_changed), ms(w.deleted));

/** A listed entry in the engine's terms. */
export function toRemoteEntry(w: WireSubscription): RemoteEntry {
  const dataAt = ms(w.subscription_changed);
  const entry: RemoteEntry = {
    guid: w.guid,
    feedUrl: w.feed_url,
    isSubscribed: w.is_subscribed,
    at: atOf(w),
    dataAt,
  };
  if (w.new_guid !== undefined) entry.newGuid = w.new_guid;
  if (w.subscription_changed !== undefined) entry.subscriptionChanged = w.subscription_changed;
  if (w.guid_changed !== undefined) entry.guidChanged = w.guid_changed;
  if (w.deleted !== undefined) entry.deleted = w.deleted;
  return entry;
}

/** What a drain counts of a skipped entry: the guids it was listed under and its server time. */
export interface ListedOnly {
  guid: string;
  newGuid?: string;
  at: number;
}

/** A skipped entry as the drain counts it (never stored). */
export function toListedOnly(w: WireSkipped): ListedOnly {
  return { guid: w.guid, ...(w.new_guid === undefined ? {} : { newGuid: w.new_guid }), at: atOf(w) };
}

/** One added entry of a POST answer in the engine's terms. */
export function toAddedEntry(w: WireAddResult['success'][number]): AddedEntry {
  const entry: AddedEntry = { guid: w.guid, feedUrl: w.feed_url, isSubscribed: w.is_subscribed };
  if (w.subscription_changed !== undefined) entry.subscriptionChanged = w.subscription_changed;
  return entry;
}

/** A PATCH answer in the engine's terms. */
export function toUpdateResult(w: WireUpdateResult): UpdateResult {
  const result: UpdateResult = {};
  if (w.new_feed_url !== undefined) result.feedUrl = w.new_feed_url;
  if (w.is_subscribed !== undefined) result.isSubscribed = w.is_subscribed;
  if (w.subscription_changed !== undefined) result.subscriptionChanged = w.subscription_changed;
  if (w.new_guid !== undefined) result.newGuid = w.new_guid;
  if (w.guid_changed !== undefined) result.guidChanged = w.guid_changed;
  return result;
}
