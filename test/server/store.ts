import { iso, type Clock } from './clock.ts';
import { resolveEntry, type Entry } from './entry.ts';
import type { Random } from './random.ts';
import { seedFeeds } from './seed.ts';
import type { WireNewFeed, WirePatchRequest, WirePatchResult, WirePostFailure, WirePostSuccess } from './types.ts';
import { feedUrlProblem } from './validate.ts';

/** A store operation's result: a value, or the HTTP status that refuses it. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; status: 404 | 405 | 410 };

/** An entry as a data file keeps it (`--data`): a collapse is the index of the entry it went into. */
export interface EntryRecord {
  guids: string[];
  replacedAt: number[];
  feedUrl: string;
  isSubscribed: boolean;
  subscriptionChanged: number;
  guidChanged?: number;
  deleted?: number;
  into?: number;
}

/** The in-memory subscriptions of the one account the server holds. */
export interface Store {
  /** Bumped by every write; lets list results be cached between writes. */
  readonly version: number;
  /** Every entry, collapsed and deleted ones included, in insertion order. */
  entries(): readonly Entry[];
  /** The entry any guid it ever had stands for (chains and collapses followed). */
  find(guid: string): Entry | undefined;
  /** POST semantics for one item: upsert by guid, then by feed URL. */
  upsert(feed: WireNewFeed): WirePostSuccess | WirePostFailure;
  /** PATCH semantics; `change` is already validated. */
  patch(guid: string, change: WirePatchRequest): Outcome<WirePatchResult>;
  /** Turn an entry into a tombstone (no-op when it already is one). */
  markDeleted(entry: Entry): void;
  /** Add `n` generated entries. */
  seed(n: number): Entry[];
  /** Forget everything. */
  clear(): void;
  /** Every entry as a data file keeps it, in insertion order. */
  dump(): EntryRecord[];
  /** Replace everything with what `dump()` gave. */
  load(records: EntryRecord[]): void;
}

/** Create an empty store writing timestamps from `clock` and seed data from `random`. */
export function createStore(clock: Clock, random: Random): Store {
  let entries: Entry[] = [];
  let byGuid = new Map<string, Entry>();
  // Feed addresses are not unique (a PATCH may give two entries one address): keep every holder.
  let byFeed = new Map<string, Entry[]>();
  let version = 0;
  let seq = 0;

  const find = (guid: string): Entry | undefined => {
    const e = byGuid.get(guid);
    return e && resolveEntry(e);
  };
  const indexFeed = (e: Entry): void => {
    const holders = byFeed.get(e.feedUrl);
    if (holders) holders.push(e);
    else byFeed.set(e.feedUrl, [e]);
  };
  const unindexFeed = (e: Entry): void => {
    const holders = byFeed.get(e.feedUrl)?.filter((h) => h !== e);
    if (holders?.length) byFeed.set(e.feedUrl, holders);
    else byFeed.delete(e.feedUrl);
  };
  const byFeedUrl = (url: string): Entry | undefined => byFeed.get(url)?.[0];
  const insert = (feedUrl: string, guid: string, isSubscribed: boolean, at: number): Entry => {
    const e: Entry = { seq: seq++, guids: [guid], replacedAt: [], feedUrl, isSubscribed, subscriptionChanged: at, aliases: [] };
    entries.push(e);
    byGuid.set(guid, e);
    indexFeed(e);
    return e;
  };
  const current = (e: Entry): string => e.guids[e.guids.length - 1];

  return {
    get version() {
      return version;
    },
    entries: () => entries,
    find,
    upsert(feed) {
      const message = feedUrlProblem(feed.feed_url);
      if (message) return { feed_url: feed.feed_url, message };
      const found = (feed.guid !== undefined ? find(feed.guid) : undefined) ?? byFeedUrl(feed.feed_url);
      let e: Entry;
      if (!found) {
        // The seeded random, not crypto: a simulation replays the same server-made guids.
        e = insert(feed.feed_url, feed.guid ?? random.uuid(), true, clock.tick());
        version++;
      } else {
        e = found;
        // A replay of the same add changes nothing and keeps its timestamp: POST is safe to repeat.
        if (e.feedUrl !== feed.feed_url || !e.isSubscribed || e.deleted !== undefined) {
          unindexFeed(e);
          e.feedUrl = feed.feed_url;
          indexFeed(e);
          e.isSubscribed = true;
          delete e.deleted;
          e.subscriptionChanged = clock.tick();
          version++;
        }
      }
      return { feed_url: e.feedUrl, guid: current(e), is_subscribed: e.isSubscribed, subscription_changed: iso(e.subscriptionChanged) };
    },
    patch(guid, change) {
      const e = find(guid);
      if (!e) return { ok: false, status: 404 };
      if (e.deleted !== undefined) return { ok: false, status: 410 };
      const renamed = change.new_guid !== undefined && change.new_guid !== current(e);
      const target = renamed ? find(change.new_guid!) : undefined;
      // Collapsing into a tombstone would silently delete this subscription: refuse it instead.
      if (target?.deleted !== undefined) return { ok: false, status: 405 };
      const feedChanged = change.new_feed_url !== undefined && change.new_feed_url !== e.feedUrl;
      const flagChanged = change.is_subscribed !== undefined && change.is_subscribed !== e.isSubscribed;
      // A former guid of this same entry already resolves here: not a change (keeps replays harmless).
      const guidChanged = renamed && target !== e;
      if (!feedChanged && !flagChanged && !guidChanged) return { ok: true, value: {} };

      const at = clock.tick();
      version++;
      const out: WirePatchResult = {};
      if (feedChanged) {
        unindexFeed(e);
        e.feedUrl = change.new_feed_url!;
        indexFeed(e);
        out.new_feed_url = e.feedUrl;
      }
      if (flagChanged) {
        e.isSubscribed = change.is_subscribed!;
        out.is_subscribed = e.isSubscribed;
      }
      // subscription_changed is "the time the subscription flag or feed address changed" (the
      // interface's field table), so a new address moves it and the answer reports it; the unchanged
      // flag is left out ("each field appears only if that attribute changed").
      if (feedChanged || flagChanged) {
        e.subscriptionChanged = at;
        out.subscription_changed = iso(at);
      }
      if (guidChanged) {
        e.replacedAt.push(at);
        e.guidChanged = at;
        if (target) {
          e.into = target;
          target.aliases.push(e);
          unindexFeed(e);
        } else {
          e.guids.push(change.new_guid!);
          byGuid.set(change.new_guid!, e);
        }
        out.new_guid = target ? current(target) : change.new_guid;
        out.guid_changed = iso(at);
      }
      return { ok: true, value: out };
    },
    markDeleted(entry) {
      const e = resolveEntry(entry);
      if (e.deleted !== undefined) return;
      const at = clock.tick();
      e.deleted = at;
      e.isSubscribed = false;
      e.subscriptionChanged = at;
      version++;
    },
    seed(n) {
      const feeds = seedFeeds(random, n, (url) => byFeed.has(url));
      const first = clock.reserve(feeds.length);
      version++;
      return feeds.map((f, i) => insert(f.feedUrl, f.guid, f.isSubscribed, first + i));
    },
    clear() {
      entries = [];
      byGuid = new Map();
      byFeed = new Map();
      version++;
    },
    dump() {
      const index = new Map(entries.map((e, i) => [e, i]));
      return entries.map((e) => {
        const { seq: _seq, into, aliases: _aliases, ...fields } = e;
        return into ? { ...fields, guids: [...e.guids], replacedAt: [...e.replacedAt], into: index.get(into)! } : { ...fields, guids: [...e.guids], replacedAt: [...e.replacedAt] };
      });
    },
    load(records) {
      this.clear();
      const loaded = records.map(({ into: _into, ...r }): Entry => ({ ...r, seq: seq++, aliases: [] }));
      records.forEach((r, i) => {
        const e = loaded[i];
        entries.push(e);
        for (const guid of e.guids) byGuid.set(guid, e);
        if (r.into === undefined) indexFeed(e);
        else {
          e.into = loaded[r.into];
          loaded[r.into].aliases.push(e);
        }
      });
    },
  };
}
