// A unit of work inside one Dexie transaction: the rows, aliases and queued changes an edit may touch are
// read in a few bulk requests (`preload`), edited synchronously in memory (so a page of entries that touch
// each other stays consistent), then written in bulk (`flush`). Staying synchronous between requests also
// keeps the IndexedDB transaction alive: a long chain of awaits can let it commit early.
import type { ServerBase, StoredChange, StoredSubscription, SyncDatabase } from '../../src/schema.ts';
import { fold, keyFor, liveCount, mergeBase, sameRow } from './view.ts';

const MAX_HOPS = 64;

/** Edits gathered for one transaction. */
export interface Workset {
  /** Read the rows, aliases and queued changes these guids (and what they alias to) need. */
  preload(guids: readonly string[]): Promise<void>;
  /** Read a stored change by id (and its row); the same object `changes()` holds afterwards. */
  loadChange(id: number): Promise<StoredChange | undefined>;
  /** Follow aliases to the guid the row is keyed by now. */
  resolve(guid: string): string;
  /** The row at a key. */
  row(key: string): StoredSubscription | undefined;
  /** The queued changes of a row, oldest first. */
  changes(key: string): StoredChange[];
  /** Put a row's server base (creating the row when missing) and re-derive its view; returns its key. */
  setBase(key: string, base: ServerBase): string;
  /** Create a row for a local add (no server state yet). */
  createRow(key: string): void;
  /** Add or edit a queued change and re-derive its row; returns the row's key afterwards. */
  putChange(change: StoredChange): string;
  /** Remove a queued change and re-derive its row; returns the row's key afterwards. */
  deleteChange(change: StoredChange): string;
  /** Record that `from` was replaced by `to`. */
  alias(from: string, to: string): void;
  /** Re-derive a row's view (and key) from its base and queued changes. */
  recompute(key: string): string;
  /** Write everything; returns the guids whose view changed. */
  flush(): Promise<string[]>;
  /** Keys of the rows and aliases this unit of work wrote (after `flush`). */
  written(): string[];
}

/**
 * Start a unit of work; call inside a read-write transaction over all four tables. `absent` names keys
 * the caller knows are in neither the rows nor the aliases table, so they are not read (a first pull into
 * an empty store would otherwise spend half its time reading nothing: `bulkGet` is one request per key).
 */
export function createWorkset(db: SyncDatabase, absent: (key: string) => boolean = () => false): Workset {
  const rows = new Map<string, StoredSubscription | null>();
  const original = new Map<string, StoredSubscription | null>();
  const aliases = new Map<string, string | null>();
  const aliasDirty = new Set<string>();
  const byRow = new Map<string, StoredChange[]>();
  const changeDirty = new Map<number, StoredChange>();
  const changeDeleted = new Set<number>();
  const newChanges: StoredChange[] = [];
  const touched = new Set<string>();

  function missing(what: string, key: string): Error {
    return new Error(`opa-sync internal error: ${what} ${key} was not preloaded`);
  }

  async function preload(guids: readonly string[]): Promise<void> {
    // Aliases, hop by hop (chains are short; most guids have none).
    let frontier = [...new Set(guids)].filter((g) => !aliases.has(g));
    for (const g of frontier) if (absent(g)) aliases.set(g, null);
    frontier = frontier.filter((g) => !aliases.has(g));
    for (let hop = 0; frontier.length && hop < MAX_HOPS; hop++) {
      const found = await db.aliases.bulkGet(frontier);
      const next: string[] = [];
      frontier.forEach((g, i) => {
        const to = found[i]?.to ?? null;
        aliases.set(g, to);
        if (to !== null && !aliases.has(to)) next.push(to);
      });
      frontier = [...new Set(next)];
    }
    const keys = new Set<string>();
    for (const g of guids) {
      keys.add(g);
      keys.add(resolve(g));
    }
    for (const k of keys) {
      if (!rows.has(k) && absent(k)) {
        rows.set(k, null);
        original.set(k, null);
      }
    }
    const toRead = [...keys].filter((k) => !rows.has(k));
    if (toRead.length) {
      const found = await db.subscriptions.bulkGet(toRead);
      toRead.forEach((k, i) => {
        rows.set(k, found[i] ?? null);
        original.set(k, found[i] ?? null);
      });
    }
    // Queued changes only for rows that have some: during a pull that is almost none.
    const withChanges = [...keys].filter((k) => {
      const r = rows.get(k);
      if (byRow.has(k)) return false;
      if (!r || (r.pending === 0 && !r.hasFailed)) {
        byRow.set(k, []);
        return false;
      }
      return true;
    });
    if (withChanges.length) {
      const found = await db.outbox.where('guid').anyOf(withChanges).toArray();
      for (const k of withChanges) byRow.set(k, []);
      for (const change of found.sort((a, b) => a.id! - b.id!)) byRow.get(change.guid)?.push(change);
    }
  }

  async function loadChange(id: number): Promise<StoredChange | undefined> {
    if (changeDeleted.has(id)) return undefined;
    const stored = changeDirty.get(id) ?? (await db.outbox.get(id));
    if (!stored) return undefined;
    await preload([stored.guid]);
    const list = changes(stored.guid);
    const found = list.find((c) => c.id === id);
    if (found) return found;
    // The row's counts said it had no changes: trust the outbox and let recompute repair the row.
    list.push(stored);
    list.sort((a, b) => a.id! - b.id!);
    return stored;
  }

  function resolve(guid: string): string {
    let current = guid;
    for (let hop = 0; hop < MAX_HOPS; hop++) {
      const next = aliases.get(current);
      if (next === undefined) throw missing('alias', current);
      if (next === null || next === guid) return current;
      current = next;
    }
    return current;
  }

  function row(key: string): StoredSubscription | undefined {
    if (!rows.has(key)) throw missing('row', key);
    return rows.get(key) ?? undefined;
  }

  function changes(key: string): StoredChange[] {
    const list = byRow.get(key);
    if (!list) throw missing('changes of', key);
    return list;
  }

  function setRow(key: string, value: StoredSubscription | null): void {
    if (!original.has(key)) original.set(key, null);
    rows.set(key, value);
    touched.add(key);
    if (!byRow.has(key)) byRow.set(key, []);
    // A key in use is current: it must not alias elsewhere (that would make a cycle). A key whose alias was
    // never read (a re-key target nothing preloaded) gets a delete anyway: it costs nothing when absent.
    if (value && aliases.get(key) !== null) {
      aliases.set(key, null);
      aliasDirty.add(key);
    }
  }

  function alias(from: string, to: string): void {
    if (from === to) return;
    aliases.set(from, to);
    aliasDirty.add(from);
    // Re-keying back (to → … → from existed): `to` is current again, so its own alias would make a cycle.
    if (aliases.has(to) && resolveLoaded(to) === from) {
      aliases.set(to, null);
      aliasDirty.add(to);
    }
  }

  function resolveLoaded(guid: string): string {
    let current = guid;
    for (let hop = 0; hop < MAX_HOPS; hop++) {
      const next = aliases.get(current);
      if (next === undefined || next === null || next === guid) return current;
      current = next;
    }
    return current;
  }

  function markChange(change: StoredChange): void {
    if (change.id === undefined) {
      if (!newChanges.includes(change)) newChanges.push(change);
    } else {
      changeDirty.set(change.id, change);
    }
  }

  function recompute(key: string, depth = 0): string {
    const current = row(key);
    const list = changes(key);
    if (!current) return key;
    if (!current.base && list.length === 0) {
      // A local add that never reached the server and has nothing left queued.
      setRow(key, null);
      return key;
    }
    const target = keyFor(current.base, list, key);
    if (target !== key && depth < MAX_HOPS) {
      if (!rows.has(target)) {
        // A target nobody preloaded is a guid nothing local uses yet.
        rows.set(target, null);
        original.set(target, null);
        byRow.set(target, []);
        // Its alias stays unknown on purpose: setRow then deletes whatever the table holds for it.
      }
      const existing = rows.get(target) ?? undefined;
      const existingChanges = existing ? changes(target) : [];
      for (const change of list) {
        change.guid = target;
        markChange(change);
      }
      const merged = [...existingChanges, ...list].sort((a, b) => (a.id ?? Infinity) - (b.id ?? Infinity));
      // Collapsing into an existing entry: the target keeps its own server state (as the server does).
      const base = existing?.base ?? (current.base ? { ...current.base } : undefined);
      setRow(key, null);
      byRow.set(key, []);
      alias(key, target);
      setRow(target, { guid: target, feedUrl: '', isSubscribed: true, pending: 0, ...(base ? { base } : {}) });
      byRow.set(target, merged);
      return recompute(target, depth + 1);
    }
    let base = current.base;
    let list2 = list;
    if (base && base.guid !== key) {
      // A queued guid change keys this row; the guid the server knows it by must lead here too. A row under
      // that guid (a pull stored the entry before our add was acknowledged) is the same server entry: fold it in.
      const server = base.guid;
      const other = rows.get(server);
      if (other) {
        const moved = changes(server);
        for (const change of moved) {
          change.guid = key;
          markChange(change);
        }
        list2 = [...list, ...moved].sort((a, b) => (a.id ?? Infinity) - (b.id ?? Infinity));
        byRow.set(key, list2);
        byRow.set(server, []);
        if (other.base) base = mergeBase(base, other.base) ?? base;
        setRow(server, null);
      }
      if (resolveLoaded(server) !== key) alias(server, key);
    }
    const next: StoredSubscription = { guid: key, ...fold(base, list2), pending: liveCount(list2) };
    if (list2.length > next.pending) next.hasFailed = true;
    if (base) next.base = base;
    if (!sameRow(current, next) || current.hasFailed !== next.hasFailed) setRow(key, next);
    return key;
  }

  function setBase(key: string, base: ServerBase): string {
    const current = row(key);
    if (current) setRow(key, { ...current, base });
    else setRow(key, { guid: key, feedUrl: base.feedUrl, isSubscribed: base.isSubscribed, pending: 0, base });
    return recompute(key);
  }

  function createRow(key: string): void {
    setRow(key, { guid: key, feedUrl: '', isSubscribed: true, pending: 0 });
  }

  function putChange(change: StoredChange): string {
    const list = changes(change.guid);
    if (!list.includes(change)) {
      const at = change.id === undefined ? -1 : list.findIndex((c) => c.id === change.id);
      if (at >= 0) list[at] = change;
      else list.push(change);
    }
    markChange(change);
    return recompute(change.guid);
  }

  function deleteChange(change: StoredChange): string {
    const key = change.guid;
    byRow.set(
      key,
      changes(key).filter((c) => c !== change && (change.id === undefined || c.id !== change.id)),
    );
    if (change.id !== undefined) {
      changeDeleted.add(change.id);
      changeDirty.delete(change.id);
    } else {
      newChanges.splice(newChanges.indexOf(change), 1);
    }
    return recompute(key);
  }

  async function flush(): Promise<string[]> {
    const puts: StoredSubscription[] = [];
    const deletes: string[] = [];
    const changed: string[] = [];
    for (const key of touched) {
      const value = rows.get(key) ?? null;
      const before = original.get(key) ?? null;
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
    for (const from of aliasDirty) {
      const to = aliases.get(from);
      if (to) aliasPuts.push({ from, to });
      else aliasDeletes.push(from);
    }
    const writes: Promise<unknown>[] = [];
    if (deletes.length) writes.push(db.subscriptions.bulkDelete(deletes));
    if (puts.length) writes.push(db.subscriptions.bulkPut(puts));
    if (aliasPuts.length) writes.push(db.aliases.bulkPut(aliasPuts));
    if (aliasDeletes.length) writes.push(db.aliases.bulkDelete(aliasDeletes));
    if (changeDeleted.size) writes.push(db.outbox.bulkDelete([...changeDeleted]));
    if (changeDirty.size) writes.push(db.outbox.bulkPut([...changeDirty.values()]));
    if (newChanges.length) {
      writes.push(
        db.outbox.bulkAdd(newChanges, { allKeys: true }).then((ids) => {
          newChanges.forEach((c, i) => (c.id = ids[i] as number));
        }),
      );
    }
    await Promise.all(writes);
    writtenKeys = [...puts.map((r) => r.guid), ...aliasPuts.map((a) => a.from)];
    return changed;
  }

  let writtenKeys: string[] = [];
  function written(): string[] {
    return writtenKeys;
  }

  return { preload, loadChange, resolve, row, changes, setBase, createRow, putChange, deleteChange, alias, recompute, flush, written };
}
