// Checks of what the app passes in: a bad argument is refused with `invalid` before anything is queued.
import { SyncError } from '../../src/errors.ts';
import type { OpmlSkip, SubscriptionChange, SubscriptionFilter } from '../../src/types.ts';
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

/** The most feed URLs one `addMany` takes: an OPML file's outline bound (`MAX_OPML_OUTLINES`). */
export const MAX_ADD_MANY = 10_000;

/** `addMany`'s list: the feed URLs to add (each once, trimmed), and those passed over with why. */
export function checkFeedUrls(urls: unknown): { feeds: string[]; skipped: OpmlSkip[] } {
  if (!Array.isArray(urls) || urls.length > MAX_ADD_MANY)
    throw new SyncError('invalid', `addMany takes an array of at most ${MAX_ADD_MANY} feed URLs: split a longer list into several calls`);
  const feeds = new Set<string>();
  const skipped: OpmlSkip[] = [];
  for (const raw of urls as unknown[]) {
    const url = feedUrlOf(raw);
    if (url === undefined) skipped.push({ url: String(raw), reason: 'not-a-feed-url' });
    else if (feeds.has(url)) skipped.push({ url, reason: 'duplicate' });
    else feeds.add(url);
  }
  return { feeds: [...feeds], skipped };
}
