// A sorted list patched in place: the store puts the few rows a change re-read at their places (the
// subscriptions by guid, IndexedDB's order; a podcast's episodes in the engine's order) instead of merging and
// sorting the whole list.

/** A row a change named: where it is in a list now (-1: not there), and what it becomes (undefined: gone). */
export type Named<T> = [find: (list: readonly T[]) => number, row: T | undefined];

/**
 * `list` (ordered by `before`) with each named row's entry out and what it became in, at its place; `keep(was,
 * now)` gives the row to hold (the old one when equal). Returns `list` itself when no row changed, else a new
 * array (the store freezes it with the snapshot it joins); `list` is never modified.
 */
export function patch<T>(list: readonly T[], named: readonly Named<T>[], before: (a: T, b: T) => boolean, keep: (was: T | undefined, now: T) => T): readonly T[] {
  let out: T[] | undefined;
  for (const [find, row] of named) {
    const at = out ?? list;
    const index = find(at);
    const was = at[index];
    const now = row && keep(was, row);
    if (now === was) continue;
    out ??= list.slice();
    if (was) out.splice(index, 1);
    // Its place by a scan, as finding the row was: the splice moves as many rows anyway.
    if (now) {
      const place = out.findIndex((r) => !before(r, now));
      out.splice(place < 0 ? out.length : place, 0, now);
    }
  }
  return out ?? list;
}

/**
 * `list` (sorted by guid) with the rows of `guids` re-read as `rows`: each one replaced, inserted, or removed
 * when the read did not find it (see `patch`).
 */
export function patchSorted<T extends { guid: string }>(list: readonly T[], guids: Iterable<string>, rows: readonly T[], keep: (was: T | undefined, now: T) => T): readonly T[] {
  const read = new Map(rows.map((row) => [row.guid, row]));
  // A guid named twice finds its row already placed the second time: nothing to dedupe.
  const named = [...guids, ...read.keys()].map((guid): Named<T> => [(at) => at.findIndex((row) => row.guid === guid), read.get(guid)]);
  return patch(list, named, (a, b) => a.guid < b.guid, keep);
}
