// The stored form of one subscription and the questions asked of it.

/** One subscription as stored: its whole guid history, and where it points once collapsed. */
export interface Entry {
  /** Insertion order, the default list order. */
  readonly seq: number;
  /** Every guid it had, oldest first; the last is current unless the entry was collapsed. */
  guids: string[];
  /** `replacedAt[i]` is when `guids[i]` stopped being current (one per rename, plus the collapse). */
  replacedAt: number[];
  feedUrl: string;
  isSubscribed: boolean;
  subscriptionChanged: number;
  guidChanged?: number;
  deleted?: number;
  /** The existing entry this one was collapsed into by a PATCH `new_guid`. */
  into?: Entry;
  /** Entries collapsed into this one. */
  aliases: Entry[];
}

/** Follow collapses to the entry that now stands for `entry`. */
export function resolveEntry(entry: Entry): Entry {
  let e = entry;
  while (e.into) e = e.into;
  return e;
}

/** The newest guid: the current guid of the entry `entry` resolves to. */
export function newestGuid(entry: Entry): string {
  const e = resolveEntry(entry);
  return e.guids[e.guids.length - 1];
}

/** The guid `entry` had at `since` (its first guid when it was made later). */
export function guidAt(entry: Entry, since: number): string {
  const i = entry.replacedAt.findIndex((t) => t > since);
  return entry.guids[i === -1 ? entry.guids.length - 1 : i];
}

/** The latest of the timestamps a `since` query compares. */
export function lastChange(entry: Entry): number {
  return Math.max(entry.subscriptionChanged, entry.guidChanged ?? -Infinity, entry.deleted ?? -Infinity);
}

/** Every guid of `entry` and of the entries collapsed into it. */
export function allGuids(entry: Entry): string[] {
  return [...entry.guids, ...entry.aliases.flatMap(allGuids)];
}
