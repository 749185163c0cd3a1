// Deriving a row from its server base and queued changes: the view, the key (a queued guid change re-keys
// the row, merging into a row already there), and the aliases that keep old guids leading to it.
import type { ServerBase, StoredChange, StoredSubscription } from '../../src/schema.ts';
import { fold, keyFor, liveCount, mergeBase, sameRow } from './view.ts';
import { alias, changes, markChange, MAX_HOPS, resolveLoaded, row, setRow, type WorksetState } from './workset-state.ts';

/** Re-derive a row's view (and key) from its base and queued changes; returns its key afterwards. */
export function recompute(st: WorksetState, key: string, depth = 0): string {
  const current = row(st, key);
  const list = changes(st, key);
  if (!current) return key;
  if (!current.base && list.length === 0) {
    // A local add that never reached the server and has nothing left queued.
    setRow(st, key, null);
    return key;
  }
  const target = keyFor(current.base, list, key);
  if (target !== key && depth < MAX_HOPS) {
    if (!st.rows.has(target)) {
      // A target nobody preloaded is a guid nothing local uses yet.
      st.rows.set(target, null);
      st.original.set(target, null);
      st.byRow.set(target, []);
      // Its alias stays unknown on purpose: setRow then deletes whatever the table holds for it.
    }
    const existing = st.rows.get(target) ?? undefined;
    const existingChanges = existing ? changes(st, target) : [];
    const merged = moveChanges(st, list, target, existingChanges);
    // Collapsing into an existing entry: the target keeps its own server state (as the server does).
    const base = existing?.base ?? (current.base ? { ...current.base } : undefined);
    setRow(st, key, null);
    st.byRow.set(key, []);
    alias(st, key, target);
    createRow(st, target, base);
    st.byRow.set(target, merged);
    return recompute(st, target, depth + 1);
  }
  let base = current.base;
  let list2 = list;
  if (base && base.guid !== key) {
    // A queued guid change keys this row; the guid the server knows it by must lead here too. A row under
    // that guid (a pull stored the entry before our add was acknowledged) is the same server entry: fold it in.
    const server = base.guid;
    const other = st.rows.get(server);
    if (other) {
      list2 = moveChanges(st, changes(st, server), key, list);
      st.byRow.set(key, list2);
      st.byRow.set(server, []);
      if (other.base) base = mergeBase(base, other.base) ?? base;
      setRow(st, server, null);
    }
    if (resolveLoaded(st, server) !== key) alias(st, server, key);
  }
  const next: StoredSubscription = { guid: key, ...fold(base, list2), pending: liveCount(list2) };
  if (list2.length > next.pending) next.hasFailed = true;
  if (base) next.base = base;
  if (!sameRow(current, next) || current.hasFailed !== next.hasFailed) setRow(st, key, next);
  return key;
}

/** Put a row's server base (creating the row when missing) and re-derive its view; returns its key. */
export function setBase(st: WorksetState, key: string, base: ServerBase): string {
  const current = row(st, key);
  if (current) setRow(st, key, { ...current, base });
  else setRow(st, key, { guid: key, feedUrl: base.feedUrl, isSubscribed: base.isSubscribed, pending: 0, base });
  return recompute(st, key);
}

/** Create a row for a local add (no server state yet), or one a re-key merges into (with the `base` it keeps). */
export function createRow(st: WorksetState, key: string, base?: ServerBase): void {
  setRow(st, key, { guid: key, feedUrl: '', isSubscribed: true, pending: 0, ...(base && { base }) });
}

/** Re-key `moved` changes to `key`, after the `kept` ones there; the two lists in queue order. */
function moveChanges(st: WorksetState, moved: StoredChange[], key: string, kept: StoredChange[]): StoredChange[] {
  for (const change of moved) {
    change.guid = key;
    markChange(st, change);
  }
  return [...kept, ...moved].sort((a, b) => (a.id ?? Infinity) - (b.id ?? Infinity));
}

/** Add or edit a queued change and re-derive its row; returns the row's key afterwards. */
export function putChange(st: WorksetState, change: StoredChange): string {
  if (change.state === 'queued' && st.copying(change)) change.copied = true;
  const list = changes(st, change.guid);
  if (!list.includes(change)) {
    const at = change.id === undefined ? -1 : list.findIndex((c) => c.id === change.id);
    if (at >= 0) list[at] = change;
    else list.push(change);
  }
  markChange(st, change);
  return recompute(st, change.guid);
}

/** Remove a queued change and re-derive its row; returns the row's key afterwards. */
export function deleteChange(st: WorksetState, change: StoredChange): string {
  const key = change.guid;
  st.byRow.set(
    key,
    changes(st, key).filter((c) => c !== change && (change.id === undefined || c.id !== change.id)),
  );
  if (change.id !== undefined) {
    st.changeDeleted.add(change.id);
    st.changeDirty.delete(change.id);
  } else {
    st.newChanges.splice(st.newChanges.indexOf(change), 1);
  }
  return recompute(st, key);
}
