// A list kept sorted by guid (IndexedDB's order of the subscriptions, each once), patched in place: the store
// applies the few rows a change re-read by binary search instead of merging and sorting the whole list.

/** The index of the first row of `list` (ordered so) that `below` is false for (`list.length` when none). */
export function lowerBound<T>(list: readonly T[], below: (row: T) => boolean): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (below(list[mid]!)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * `list` (sorted by guid) with the rows of `guids` re-read as `rows`: each one replaced, inserted, or removed
 * when the read did not find it; `keep(was, now)` gives the row to hold (the old one when equal). Returns
 * `list` itself when no row changed, else a new frozen array; `list` is never modified.
 */
export function patchSorted<T extends { guid: string }>(list: readonly T[], guids: Iterable<string>, rows: readonly T[], keep: (was: T | undefined, now: T) => T): readonly T[] {
  const read = new Map(rows.map((row) => [row.guid, row]));
  let out: T[] | undefined;
  for (const guid of new Set([...guids, ...read.keys()])) {
    const at = out ?? list;
    const i = lowerBound(at, (row) => row.guid < guid);
    const was = at[i]?.guid === guid ? at[i] : undefined;
    const row = read.get(guid);
    const now = row && keep(was, row);
    if (now === was) continue;
    out ??= list.slice();
    // `was` (if any) out and `now` (if any) in, at the same place: they share the guid the order is by.
    if (now) out.splice(i, was ? 1 : 0, now);
    else out.splice(i, 1);
  }
  return out ? Object.freeze(out) : list;
}
