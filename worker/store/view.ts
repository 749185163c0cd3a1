// Pure functions from a row's server base and its queued changes to what the app sees.
import type { ServerBase, StoredChange, StoredSubscription } from '../../src/schema.ts';
import type { Subscription, SubscriptionChange } from '../../src/types.ts';
import { formatTimestamp } from '../time.ts';

/** The local view's fields: the base with every live (not failed) queued change folded in, in order. */
export function fold(
  base: ServerBase | undefined,
  changes: readonly StoredChange[],
): Pick<StoredSubscription, 'feedUrl' | 'isSubscribed' | 'deleted'> {
  // Without a server base, the URL the app asked for (even when the add failed): a row never shows an empty URL.
  let feedUrl = base?.feedUrl ?? changes.find((c) => c.kind === 'add' && c.feedUrl !== undefined)?.feedUrl ?? '';
  let isSubscribed = base?.isSubscribed ?? true;
  let deleted = base?.deleted;
  /** A live deletion hides the edits held behind it (they only matter if it fails). */
  let removing = false;
  for (const change of changes) {
    if (change.state === 'failed' || (change.held && removing)) continue;
    if (change.kind === 'add') {
      feedUrl = change.feedUrl ?? feedUrl;
      isSubscribed = true;
      deleted = undefined;
      removing = false;
    } else if (change.kind === 'update' && change.change) {
      if (change.change.feedUrl !== undefined) feedUrl = change.change.feedUrl;
      if (change.change.isSubscribed !== undefined) isSubscribed = change.change.isSubscribed;
    } else if (change.kind === 'remove') {
      deleted = formatTimestamp(change.createdAt);
      removing = true;
    }
  }
  return deleted === undefined ? { feedUrl, isSubscribed } : { feedUrl, isSubscribed, deleted };
}

/** The guid a row should be keyed by: the last live queued guid change, else the server's guid. */
export function keyFor(base: ServerBase | undefined, changes: readonly StoredChange[], current: string): string {
  for (let i = changes.length - 1; i >= 0; i--) {
    const change = changes[i]!;
    if (change.state !== 'failed' && change.kind === 'update' && change.change?.guid !== undefined) return change.change.guid;
  }
  return base?.guid ?? current;
}

/** Whether a change would leave a state (a row's view, or its state before a queued change) as it is. */
export function changesNothing(change: SubscriptionChange, state: { guid: string | undefined; feedUrl: string; isSubscribed: boolean }): boolean {
  return (
    (change.guid === undefined || change.guid === state.guid) &&
    (change.feedUrl === undefined || change.feedUrl === state.feedUrl) &&
    (change.isSubscribed === undefined || change.isSubscribed === state.isSubscribed)
  );
}

/** Count of live queued changes. */
export function liveCount(changes: readonly StoredChange[]): number {
  let n = 0;
  for (const change of changes) if (change.state !== 'failed') n++;
  return n;
}

/** The public shape of a stored row. */
export function toSubscription(row: StoredSubscription): Subscription {
  const view: Subscription = {
    guid: row.guid,
    feedUrl: row.feedUrl,
    isSubscribed: row.isSubscribed,
    pending: row.pending > 0,
  };
  const base = row.base;
  if (base?.subscriptionChanged !== undefined) view.subscriptionChanged = base.subscriptionChanged;
  if (base?.guidChanged !== undefined) view.guidChanged = base.guidChanged;
  if (row.deleted !== undefined) view.deleted = row.deleted;
  return view;
}

/** Whether two rows would look the same to the app (no write, no change event needed). */
export function sameRow(a: StoredSubscription | undefined, b: StoredSubscription): boolean {
  if (!a) return false;
  if (a.guid !== b.guid || a.feedUrl !== b.feedUrl || a.isSubscribed !== b.isSubscribed) return false;
  if (a.deleted !== b.deleted || a.pending !== b.pending) return false;
  const x = a.base;
  const y = b.base;
  if (!x || !y) return x === y;
  return (
    x.guid === y.guid &&
    x.feedUrl === y.feedUrl &&
    x.isSubscribed === y.isSubscribed &&
    x.subscriptionChanged === y.subscriptionChanged &&
    x.guidChanged === y.guidChanged &&
    x.deleted === y.deleted &&
    x.at === y.at &&
    x.dataAt === y.dataAt
  );
}

/**
 * Fold a server entry into the base held locally, part by part, never going back in time: the feed address
 * and flag by `subscription_changed`, the deleted state by the entry's newest timestamp. (When two entries
 * collapse into one, each part keeps the most recent server state.) Returns undefined when nothing is newer.
 */
export function mergeBase(held: ServerBase | undefined, incoming: ServerBase): ServerBase | undefined {
  if (!held) return incoming;
  if (incoming.at < held.at && incoming.dataAt <= held.dataAt) return undefined;
  const merged: ServerBase = { ...held, guid: incoming.guid, at: Math.max(held.at, incoming.at) };
  if (incoming.dataAt >= held.dataAt) {
    merged.feedUrl = incoming.feedUrl;
    merged.isSubscribed = incoming.isSubscribed;
    merged.dataAt = incoming.dataAt;
    if (incoming.subscriptionChanged !== undefined) merged.subscriptionChanged = incoming.subscriptionChanged;
  }
  if (incoming.guidChanged !== undefined && (held.guidChanged === undefined || incoming.at >= held.at)) merged.guidChanged = incoming.guidChanged;
  if (incoming.at >= held.at) {
    if (incoming.deleted !== undefined) merged.deleted = incoming.deleted;
    else delete merged.deleted;
  }
  return merged;
}

/**
 * Fold in a server entry that is the server's word whatever the held stamps say (a full listing read after its
 * clock stepped): its address, flag, deleted state and stamps replace the held ones, so later entries compare
 * against the server's clock since the step.
 */
export function replaceBase(held: ServerBase | undefined, incoming: ServerBase): ServerBase {
  const merged: ServerBase = { ...held, ...incoming };
  if (incoming.deleted === undefined) delete merged.deleted;
  return merged;
}
