// What a pull writes: server entries folded into the rows' bases (guid chains re-key and merge rows), with
// the cursor committed in the same transaction as the pull's last entries.
import type { ServerBase } from '../../src/schema.ts';
import { formatTimestamp } from '../time.ts';
import type { RemoteEntry } from '../transport.ts';
import { META, type FreshBatch, type FreshPull, type StoreCore } from './core.ts';
import { queued } from './edits.ts';
import { mergeBase, replaceBase } from './view.ts';

/** How a pull's last batch completes it. */
export interface PullCompletion {
  /** The new cursor (server time, ms); undefined keeps the store without one. */
  cursor: number | undefined;
  /** A full listing's guids: live rows it did not name were deleted on the server. */
  listed?: ReadonlySet<string>;
  /**
   * The listing came from a server whose clock went back: it may hide what it stamped after its new "now"
   * (mygpo), or have lost it (a restore). A subscribed row it left out whose server word (`dataAt`) is later
   * than this time is said again (an add), never tombstoned; one the listing covers is tombstoned as usual.
   */
  restate?: number;
  /** Device time (ms) to stamp what `restate` queues. */
  now?: number;
  /** See `PullSink.tail`: stored with the cursor (and cleared when a pull gives none). */
  tail?: number;
}

function baseFrom(entry: RemoteEntry): ServerBase {
  const base: ServerBase = {
    guid: entry.newGuid ?? entry.guid,
    feedUrl: entry.feedUrl,
    isSubscribed: entry.isSubscribed,
    at: entry.at,
    dataAt: entry.dataAt,
  };
  if (entry.subscriptionChanged !== undefined) base.subscriptionChanged = entry.subscriptionChanged;
  if (entry.guidChanged !== undefined) base.guidChanged = entry.guidChanged;
  if (entry.deleted !== undefined) base.deleted = entry.deleted;
  return base;
}

/** The store's pull writes. */
export function createPullWrites({ db, edit, read }: StoreCore) {
  return {
    /** Apply validated server entries in one transaction (and complete the pull with them). Returns the changed guids. */
    async applyEntries(entries: readonly RemoteEntry[], completion?: PullCompletion, fresh?: FreshPull) {
      const guids = entries.flatMap((e) => (e.newGuid === undefined ? [e.guid] : [e.guid, e.newGuid]));
      // Claimed now, synchronously: a batch handed over after this one (and queued behind it) reads these keys.
      let unit: FreshBatch | undefined;
      if (fresh) {
        unit = { pull: fresh, batch: ++fresh.batches };
        for (const key of guids) if (!fresh.written.has(key)) fresh.written.set(key, unit.batch);
      }
      return edit(async (ws) => {
        await ws.preload(guids);
        /** An entry was set aside for a move still under way: the cursor must not pass it. */
        let held = false;
        for (const entry of entries) {
          if (entry.standalone) {
            const key = ws.resolve(entry.guid);
            const serverName = ws.row(key)?.base?.guid;
            if (serverName !== undefined && serverName !== entry.guid) {
              // The row here is another server entity: one moving to this URL, or one that moved away from it
              // (removed, that is the move itself; subscribed again, it is a subscription of its own). A row
              // moving here holds the URL's key until its move settles: set the entry aside and keep the cursor
              // before it, so the next pull reads it again (the move may yet be refused).
              if (key === entry.guid) {
                held = true;
                continue;
              }
              if (!entry.isSubscribed) continue;
              ws.unalias(entry.guid);
            }
          }
          const base = baseFrom(entry);
          const newest = base.guid;
          const k1 = ws.resolve(entry.guid);
          const r1 = ws.row(k1);
          const k2 = newest === entry.guid ? k1 : ws.resolve(newest);
          const r2 = k2 === k1 ? r1 : ws.row(k2);
          if (newest !== entry.guid) ws.alias(entry.guid, newest);
          if (r1 && r2 && k1 !== k2) {
            // Two local rows are one on the server now: re-key the old one onto the newest (merging them).
            ws.setBase(k1, { ...(r1.base ?? base), guid: k2 });
          }
          const key = r2 ? k2 : r1 ? k1 : newest;
          const merged = entry.authoritative ? replaceBase(ws.row(key)?.base, base) : mergeBase(ws.row(key)?.base, base);
          if (!merged) continue;
          const finalKey = ws.setBase(key, merged);
          if (finalKey !== newest) ws.alias(newest, finalKey);
        }
        if (!completion) return false;
        // The server's word came (a pull with nothing in it, or one held back from the cursor, too).
        await db.meta.put({ key: META.pulls, value: (((await db.meta.get(META.pulls))?.value as number) ?? 0) + 1 });
        if (completion.cursor === undefined || held) return false;
        const { cursor, listed } = completion;
        if (listed) {
          // The listing was complete: what it left out was deleted on the server (with the cursor, atomically).
          const stale = (await db.subscriptions.toArray()).filter((r) => r.base && r.base.deleted === undefined && !listed.has(r.base.guid));
          await ws.preload(stale.map((r) => r.guid));
          for (const r of stale) {
            const row = ws.row(r.guid);
            if (!row?.base || row.base.deleted !== undefined || listed.has(row.base.guid)) continue;
            const hidden = completion.restate !== undefined && row.base.isSubscribed && row.base.dataAt > completion.restate;
            if (!hidden) ws.setBase(r.guid, { ...row.base, deleted: formatTimestamp(cursor) });
            else if (!ws.changes(r.guid).length) {
              ws.putChange(queued({ guid: r.guid, kind: 'add', feedUrl: row.base.feedUrl, serverGuid: row.base.guid }, completion.now ?? cursor));
            }
          }
        }
        // A store wiped since the pull began (its earlier pages gone too) is refused by the run's guard (see `Guard`).
        await db.meta.put({ key: META.cursor, value: cursor });
        if (completion.tail === undefined) await db.meta.delete(META.tail);
        else await db.meta.put({ key: META.tail, value: completion.tail });
        return true;
      }, unit, completion !== undefined);
    },
  };
}
