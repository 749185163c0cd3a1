// Checks of what the app passes in: a bad argument is refused with `invalid` before anything is queued.
import { SyncError } from '../../src/errors.ts';
import type { SubscriptionChange, SubscriptionFilter } from '../../src/types.ts';
import { feedUrlOf } from '../feed-url.ts';
import { isGuid } from '../guid.ts';

/** A guid that can name a subscription (non-empty, not `.` or `..`: see `isGuid`). */
export function checkGuid(guid: unknown, what = 'guid'): string {
  if (!isGuid(guid)) throw new SyncError('invalid', `${what} must be a non-empty string other than . and ..`);
  return guid;
}

/** An http(s) feed URL, without the white space around it (servers refuse or mangle it). */
export function checkFeedUrl(url: unknown): string {
  const clean = feedUrlOf(url);
  if (clean === undefined) throw new SyncError('invalid', `not an http(s) feed URL: ${String(url)}`);
  return clean;
}

/** A change with at least one valid field; unknown fields are dropped. */
export function checkChange(change: unknown): SubscriptionChange {
  if (typeof change !== 'object' || change === null) throw new SyncError('invalid', 'change must be an object');
  const given = change as SubscriptionChange;
  const clean: SubscriptionChange = {};
  if (given.feedUrl !== undefined) clean.feedUrl = checkFeedUrl(given.feedUrl);
  if (given.guid !== undefined) clean.guid = checkGuid(given.guid, 'change.guid');
  if (given.isSubscribed !== undefined) {
    if (typeof given.isSubscribed !== 'boolean') throw new SyncError('invalid', 'change.isSubscribed must be a boolean');
    clean.isSubscribed = given.isSubscribed;
  }
  if (Object.keys(clean).length === 0) throw new SyncError('invalid', 'a change needs at least one of feedUrl, guid, isSubscribed');
  return clean;
}

/** A deletion id: a whole number. */
export function checkDeletionId(id: unknown): number {
  if (typeof id !== 'number' || !Number.isInteger(id) || id < 0) throw new SyncError('invalid', 'a deletion id is a whole number');
  return id;
}

/** A `subscriptions()` filter: `guids`, when given, is a list of strings. */
export function checkFilter(filter: SubscriptionFilter | undefined): SubscriptionFilter | undefined {
  if (filter?.guids !== undefined && (!Array.isArray(filter.guids) || !filter.guids.every((g) => typeof g === 'string'))) {
    throw new SyncError('invalid', 'filter.guids must be an array of guids');
  }
  return filter;
}
