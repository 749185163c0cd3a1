import { iso } from './clock.ts';
import { allGuids, newestGuid, type Entry } from './entry.ts';
import type { ServerEntryView, WireSubscription } from './types.ts';

/** The wire form of `entry` reported under `guid`; `new_guid` appears when the newest guid differs. */
export function toWire(entry: Entry, guid: string): WireSubscription {
  const newest = newestGuid(entry);
  const out: WireSubscription = {
    feed_url: entry.feedUrl,
    guid,
    is_subscribed: entry.isSubscribed,
    subscription_changed: iso(entry.subscriptionChanged),
  };
  if (newest !== guid) out.new_guid = newest;
  if (entry.guidChanged !== undefined) out.guid_changed = iso(entry.guidChanged);
  if (entry.deleted !== undefined) out.deleted = iso(entry.deleted);
  return out;
}

/** The test-facing view of an entry that is not collapsed. */
export function toView(entry: Entry): ServerEntryView {
  const guid = entry.guids[entry.guids.length - 1];
  const view: ServerEntryView = {
    guid,
    feed_url: entry.feedUrl,
    is_subscribed: entry.isSubscribed,
    subscription_changed: iso(entry.subscriptionChanged),
    old_guids: allGuids(entry).filter((g) => g !== guid),
  };
  if (entry.guidChanged !== undefined) view.guid_changed = iso(entry.guidChanged);
  if (entry.deleted !== undefined) view.deleted = iso(entry.deleted);
  return view;
}
