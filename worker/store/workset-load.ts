// Reading what a unit of work needs, in a few bulk requests.
import type { StoredChange } from '../../src/schema.ts';
import { changes, MAX_HOPS, resolve, type WorksetState } from './workset-state.ts';

/** Up to this many guids, their queued changes are read with their rows instead of after (a local edit's case). */
const FEW = 8;

/** Read the rows, aliases and queued changes these guids (and what they alias to) need. */
export async function preload(st: WorksetState, guids: readonly string[]): Promise<void> {
  const wanted = [...new Set(guids)];
  // Each read waits for the one before it inside the transaction: start the likely ones together (most guids
  // have no alias, so their own rows are the ones needed; a local edit's row usually has queued changes).
  await Promise.all([loadAliases(st, wanted), loadRows(st, wanted), wanted.length <= FEW ? loadChanges(st, wanted) : undefined]);
  const keys = new Set<string>();
  for (const g of wanted) {
    keys.add(g);
    keys.add(resolve(st, g));
  }
  await loadRows(st, [...keys]);
  // Queued changes only for rows that have some: during a pull that is almost none.
  await loadChanges(
    st,
    [...keys].filter((k) => {
      const r = st.rows.get(k);
      if (st.byRow.has(k)) return false;
      if (!r || (r.pending === 0 && !r.hasFailed)) {
        st.byRow.set(k, []);
        return false;
      }
      return true;
    }),
  );
}

/** Follow aliases hop by hop (chains are short). */
async function loadAliases(st: WorksetState, guids: readonly string[]): Promise<void> {
  let frontier = guids.filter((g) => !st.aliases.has(g));
  for (const g of frontier) if (st.absent(g)) st.aliases.set(g, null);
  frontier = frontier.filter((g) => !st.aliases.has(g));
  for (let hop = 0; frontier.length && hop < MAX_HOPS; hop++) {
    const found = await st.db.aliases.bulkGet(frontier);
    const next: string[] = [];
    frontier.forEach((g, i) => {
      const to = found[i]?.to ?? null;
      st.aliases.set(g, to);
      if (to !== null && !st.aliases.has(to)) next.push(to);
    });
    frontier = [...new Set(next)];
  }
}

/** Read the rows not read yet (keys known absent are not read). */
async function loadRows(st: WorksetState, keys: readonly string[]): Promise<void> {
  const toRead: string[] = [];
  for (const k of keys) {
    if (st.rows.has(k)) continue;
    if (st.absent(k)) {
      st.rows.set(k, null);
      st.original.set(k, null);
    } else toRead.push(k);
  }
  if (!toRead.length) return;
  const found = await st.db.subscriptions.bulkGet(toRead);
  toRead.forEach((k, i) => {
    // A row read twice (by a parallel read) keeps its first copy: edits hold on to it.
    if (st.rows.has(k)) return;
    st.rows.set(k, found[i] ?? null);
    st.original.set(k, found[i] ?? null);
  });
}

/** Read the queued changes of rows whose changes are not known yet. */
async function loadChanges(st: WorksetState, keys: readonly string[]): Promise<void> {
  const toRead = keys.filter((k) => !st.byRow.has(k));
  if (!toRead.length) return;
  const found = await st.db.outbox.where('guid').anyOf(toRead).toArray();
  for (const k of toRead) st.byRow.set(k, []);
  for (const change of found.sort((a, b) => a.id! - b.id!)) st.byRow.get(change.guid)?.push(change);
}

/** Read a stored change by id (and its row); the same object `changes()` holds afterwards. */
export async function loadChange(st: WorksetState, id: number): Promise<StoredChange | undefined> {
  if (st.changeDeleted.has(id)) return undefined;
  const stored = st.changeDirty.get(id) ?? (await st.db.outbox.get(id));
  if (!stored) return undefined;
  await preload(st, [stored.guid]);
  const list = changes(st, stored.guid);
  const found = list.find((c) => c.id === id);
  if (found) return found;
  // The row's counts said it had no changes: trust the outbox and let recompute repair the row.
  list.push(stored);
  list.sort((a, b) => a.id! - b.id!);
  return stored;
}
