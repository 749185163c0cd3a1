// Writing a unit of work: only what differs from what was read, in bulk requests.
import type { StoredSubscription } from '../../src/schema.ts';
import { feedMoves } from './feed-moves.ts';
import { sameRow } from './view.ts';
import type { WorksetState } from './workset-state.ts';

/** Write everything in bulk; returns the guids whose view changed. */
export async function flush(st: WorksetState): Promise<string[]> {
  const puts: StoredSubscription[] = [];
  const deletes: string[] = [];
  const changed: string[] = [];
  for (const key of st.touched) {
    const value = st.rows.get(key) ?? null;
    const before = st.original.get(key) ?? null;
    if (value === null) {
      if (before !== null) {
        deletes.push(key);
        changed.push(key);
      }
    } else if (!before || !sameRow(before, value) || before.hasFailed !== value.hasFailed) {
      puts.push(value);
      changed.push(key);
    }
  }
  const aliasPuts: { from: string; to: string }[] = [];
  const aliasDeletes: string[] = [];
  for (const from of st.aliasDirty) {
    const to = st.aliases.get(from);
    if (to) aliasPuts.push({ from, to });
    else aliasDeletes.push(from);
  }
  const writes: Promise<unknown>[] = [];
  if (deletes.length) writes.push(st.db.subscriptions.bulkDelete(deletes));
  if (puts.length) writes.push(st.db.subscriptions.bulkPut(puts));
  if (aliasPuts.length) writes.push(st.db.aliases.bulkPut(aliasPuts));
  if (aliasDeletes.length) writes.push(st.db.aliases.bulkDelete(aliasDeletes));
  if (st.changeDeleted.size) writes.push(st.db.outbox.bulkDelete([...st.changeDeleted]));
  if (st.changeDirty.size) writes.push(st.db.outbox.bulkPut([...st.changeDirty.values()]));
  if (st.newChanges.length) {
    writes.push(
      st.db.outbox.bulkAdd(st.newChanges, { allKeys: true }).then((ids) => {
        st.newChanges.forEach((c, i) => (c.id = ids[i] as number));
      }),
    );
  }
  // A subscription's feed URL moved: what follows it (listening state) moves with it, in this transaction.
  const moves = st.feedsMoved ? feedMoves(st) : undefined;
  if (moves?.size) writes.push(st.feedsMoved!(st.db, moves).then((refs) => void st.movedEpisodes.push(...refs)));
  st.writtenKeys = [...puts.map((r) => r.guid), ...aliasPuts.map((a) => a.from)];
  await Promise.all(writes);
  return changed;
}
