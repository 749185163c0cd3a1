// The one invariant checker every chaos scenario ends with. Each check returns the violations it found (as
// sentences a reader can act on); `checkInvariants` runs them all and throws one error listing every one.
//
//   1. Converged: after faults stop and a sync completes, the local view equals the server's state, nothing
//      is pending, and status agrees (idle, counts).
//   2. Nothing lost: every durable change of the app is on the server in effect, in per-subscription order,
//      or sits in failed() with a reason (the model's expectations, see model.ts); no server entry exists
//      that no intent explains (a duplicate POST, a deletion that never went out).
//   3. Cursor: every server entry changed at or before the stored cursor is reflected in the stored base.
//   4. Credentials: no request went to any origin but the base URL's.
//   5. Hostile-world invariants (the scenarios check them as they go, see below): no feed URL that is not a
//      trimmed http(s) URL in the store (what the page is handed); no change in two requests at once; no spin
//      (requests per change and simulated minute within what the backoff schedule allows); nothing of one
//      account in another's store.
import type { FailedChange, SyncStatus } from '../../src/types.ts';
import type { SyncEngine } from '../../worker/index.ts';
import type { RefServer, ServerEntryView } from '../server/types.ts';
import { localPicture, readStore, serverPicture, type OtherOrigin, type StoreSnapshot } from './fixtures.ts';
import type { Field, Model, ModelSub, Value } from './model.ts';
import type { AbandonedWrite, AuditedRequest, Transport } from './transport.ts';

/** Thrown when invariants do not hold; `violations` lists every one. */
export class InvariantViolation extends Error {
  override readonly name = 'InvariantViolation';
  constructor(readonly violations: string[]) {
    super(`${violations.length} invariant violation(s):\n  - ${violations.join('\n  - ')}`);
  }
}

/** What the checker looks at. */
export interface CheckContext {
  /** How to wait (simulated time in the scenario). @default real time */
  sleep?: (ms: number) => Promise<void>;
  engine: SyncEngine & { dbName: string };
  server: RefServer;
  /** The intent log; without it only convergence, cursor and credentials are checked. */
  model?: Model;
  transport?: Transport;
  other?: OtherOrigin;
  /**
   * Writes abandoned in flight (see Transport.abandoned). Without preconditions in the protocol a request a dead
   * or timed-out client left in the server can land after a newer one: its values are accepted as final too.
   */
  abandoned?: readonly AbandonedWrite[];
  /** Undefined when a change left in failed() was refused legitimately, else why it should not be there. Without a judge, failed() must be empty. */
  judgeFailed?(change: FailedChange, sub: ModelSub | undefined): string | undefined;
}

const ms = (iso: string | undefined): number => (iso === undefined ? -Infinity : Date.parse(iso));
/** The newest of an entry's timestamps (what `since` compares). */
export function lastChange(view: ServerEntryView): number {
  return Math.max(ms(view.subscription_changed), ms(view.guid_changed), ms(view.deleted));
}

function resolver(snapshot: StoreSnapshot): (guid: string) => string {
  const to = new Map(snapshot.aliases.map((a) => [a.from, a.to]));
  return (guid) => {
    let current = guid;
    for (let hop = 0; hop < 64; hop++) {
      const next = to.get(current);
      if (next === undefined || next === guid) return current;
      current = next;
    }
    return current;
  };
}

/**
 * The cursor never moves past a change the store has not applied: every server entry whose newest
 * timestamp is at or before the stored cursor has that state in the stored base. Safe to call while the
 * engine runs: the store is read in one transaction, and entries the server changed during the read are skipped.
 */
export async function cursorViolations(dbName: string, server: RefServer): Promise<string[]> {
  const before = new Map(server.state().map((v) => [v.guid, JSON.stringify(v)]));
  const snapshot = await readStore(dbName);
  const after = server.state();
  if (snapshot.cursor === undefined) return [];
  const cursor = snapshot.cursor;
  const resolve = resolver(snapshot);
  const rows = new Map(snapshot.rows.map((r) => [r.guid, r]));
  const out: string[] = [];
  for (const view of after) {
    if (before.get(view.guid) !== JSON.stringify(view)) continue;
    const at = lastChange(view);
    if (at > cursor) continue;
    let row;
    for (const guid of [view.guid, ...view.old_guids]) {
      row = rows.get(resolve(guid));
      if (row) break;
    }
    const where = `server entry ${view.guid} (changed ${new Date(at).toISOString()}, cursor ${new Date(cursor).toISOString()})`;
    if (!row?.base) {
      // A full pull lists no deleted entries: a tombstone the store never knew is fine.
      if (view.deleted === undefined) out.push(`cursor: ${where} is not in the store at all`);
      continue;
    }
    const base = row.base;
    if ((base.deleted !== undefined) !== (view.deleted !== undefined)) {
      out.push(`cursor: ${where} is ${view.deleted ? 'deleted' : 'live'} but the stored base says ${base.deleted ? 'deleted' : 'live'}`);
    } else if (view.deleted === undefined && (base.feedUrl !== view.feed_url || base.isSubscribed !== view.is_subscribed || base.guid !== view.guid)) {
      out.push(
        `cursor: ${where} is {${view.guid}, ${view.feed_url}, ${view.is_subscribed}} but the stored base is {${base.guid}, ${base.feedUrl}, ${base.isSubscribed}}`,
      );
    }
  }
  return out;
}

/** No request went anywhere but the base URL's origin (and the other origin heard nothing). */
export function credentialViolations(baseOrigin: string, transport?: Transport, other?: OtherOrigin): string[] {
  const out: string[] = [];
  for (const r of transport?.sent ?? []) {
    if (r.origin !== baseOrigin) out.push(`credentials: ${r.method} ${r.url} left the base origin ${baseOrigin}${r.credentials ? ' WITH credentials' : ''}`);
  }
  for (const r of other?.received ?? []) {
    out.push(`credentials: the other origin received ${r.method} ${r.url}${r.credentials ? ' WITH credentials' : ''}`);
  }
  return out;
}

/** Converged: local view = server, nothing pending, status agrees; failed() entries judged. */
async function convergenceViolations(ctx: CheckContext, subsByLocalGuid: Map<string, ModelSub>): Promise<string[]> {
  const { engine, server } = ctx;
  const out: string[] = [];
  const local = localPicture(await engine.subscriptions());
  const remote = serverPicture(server);
  const missing = remote.filter((x) => !local.includes(x));
  const extra = local.filter((x) => !remote.includes(x));
  if (missing.length || extra.length) {
    out.push(`converge: the local view differs from the server: missing locally [${missing.join('; ')}], only locally [${extra.join('; ')}]`);
  }
  const pending = await engine.pending();
  if (pending.length) out.push(`converge: still pending after the final sync: ${JSON.stringify(pending)}`);
  const failed = await engine.failed();
  for (const change of failed) {
    if (!change.reason?.code || !change.reason.message) out.push(`failed: change ${change.id} (${change.kind} ${change.guid}) has no reason`);
    const sub = subsByLocalGuid.get(change.guid) ?? ctx.model?.byHandle(change.guid);
    const why = ctx.judgeFailed ? ctx.judgeFailed(change, sub) : 'no refusal was expected';
    if (why) out.push(`failed: ${change.kind} of ${change.guid} refused (${change.reason.code} ${change.reason.status ?? ''}: ${change.reason.message}) — ${why}`);
  }
  // A run the app's last call triggered (retry, discard: a push with nothing to send) may still be finishing.
  let status = await engine.status();
  for (let waited = 0; status.phase !== 'idle' && waited < 1000; waited += 20) {
    await (ctx.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms))))(20);
    status = await engine.status();
  }
  if (status.phase !== 'idle') out.push(`status: phase is ${status.phase} a second after a completed sync`);
  if (status.pending !== pending.length || status.failed !== failed.length) {
    out.push(`status: counts ${status.pending} pending / ${status.failed} failed, but pending() has ${pending.length} and failed() ${failed.length}`);
  }
  if (status.lastError) out.push(`status: lastError ${JSON.stringify(status.lastError)} after a successful sync`);
  return out;
}

/** The engine's current guid for each model subscription (placeholders resolve through the store's aliases). */
async function localGuids(engine: SyncEngine, model: Model): Promise<Map<ModelSub, string>> {
  const out = new Map<ModelSub, string>();
  for (const sub of model.subs) {
    for (const handle of [...sub.handles].reverse()) {
      const view = await engine.subscription(handle);
      if (view) {
        out.set(sub, view.guid);
        break;
      }
    }
  }
  return out;
}

/** Values abandoned writes may have left on each server entry (keyed by the entry's current guid). */
function lateValues(server: RefServer, abandoned: readonly AbandonedWrite[]): Map<string, Partial<Record<Field, Value[]>>> {
  const out = new Map<string, Partial<Record<Field, Value[]>>>();
  const add = (guid: string | undefined, field: Field, value: Value | undefined) => {
    if (guid === undefined || value === undefined) return;
    const entry = server.entry(guid);
    if (!entry) return;
    const fields = out.get(entry.guid) ?? {};
    (fields[field] ??= []).push(value);
    out.set(entry.guid, fields);
  };
  for (const write of abandoned) {
    const path = decodeURIComponent(new URL(write.url).pathname);
    const guid = /\/subscriptions\/(.+)$/.exec(path)?.[1];
    const body = (write.body ?? {}) as { new_feed_url?: string; is_subscribed?: boolean; new_guid?: string; subscriptions?: { feed_url: string; guid?: string }[] };
    if (write.method === 'PATCH') {
      add(guid, 'feedUrl', body.new_feed_url);
      add(guid, 'isSubscribed', body.is_subscribed);
      add(guid, 'guid', body.new_guid);
    } else if (write.method === 'DELETE') {
      add(guid, 'deleted', true);
    } else if (write.method === 'POST') {
      for (const item of body.subscriptions ?? []) {
        const target = item.guid ?? server.state().find((e) => e.feed_url === item.feed_url)?.guid;
        add(target, 'feedUrl', item.feed_url);
        add(target, 'isSubscribed', true);
        add(target, 'deleted', false);
      }
    }
  }
  return out;
}

/**
 * A protocol limit, not an engine bug: a guid-less add whose POST was applied but whose answer was lost is
 * sent again (POST is an upsert by feed URL). If another device moved that entry to another feed URL before
 * the retry, the retry finds no entry with its URL and creates a second one. The client cannot tell (the spec
 * lets it send a guid only when the feed has one). Excused only when the server handled that POST twice or
 * more and another device did move the add's entry away; otherwise a duplicate is an engine bug.
 */
function replayedAfterMove(server: RefServer, feedUrl: string, hint: readonly ModelSub[]): boolean {
  const movedAway = hint.some((s) => s.origin === 'local' && s.writes.some((w) => w.by === 'foreign' && w.field === 'feedUrl' && w.value !== feedUrl));
  if (!movedAway) return false;
  const handled = server.log().filter((r) => {
    if (r.method !== 'POST' || !/\/subscriptions\/?$/.test(r.path) || r.status !== 200) return false;
    const items = (r.body as { subscriptions?: { feed_url?: string; guid?: string }[] } | undefined)?.subscriptions ?? [];
    return items.some((i) => i.feed_url === feedUrl && i.guid === undefined);
  });
  return handled.length >= 2;
}

/** Nothing lost, nothing doubled: the server's entries against the intents. */
function modelViolations(model: Model, server: RefServer, local: Map<ModelSub, string>, abandoned: readonly AbandonedWrite[] = []): string[] {
  const late = lateValues(server, abandoned);
  const out: string[] = [];
  const owner = new Map<string, ModelSub>();
  const entryOf = new Map<ModelSub, ServerEntryView>();
  for (const sub of model.subs) {
    let entry: ServerEntryView | undefined;
    for (const handle of sub.handles) {
      entry = server.entry(handle);
      if (entry) break;
    }
    const viaEngine = local.get(sub);
    if (!entry && viaEngine !== undefined) entry = server.entry(viaEngine);
    if (!entry) continue;
    const other = owner.get(entry.guid);
    if (other) {
      out.push(`identity: two intents ended on one server entry ${entry.guid}: ${model.describe(other)} and ${model.describe(sub)}`);
      continue;
    }
    owner.set(entry.guid, sub);
    entryOf.set(sub, entry);
  }
  for (const view of server.state()) {
    if (view.deleted !== undefined || owner.has(view.guid)) continue;
    const hint = model.subs.filter((s) => s.writes.some((w) => w.field === 'feedUrl' && w.value === view.feed_url));
    // An add the app discarded (or whose call a crash cut off) may have reached the server before: it may exist.
    if (hint.some((s) => s.excused || s.maybe)) continue;
    if (replayedAfterMove(server, view.feed_url, hint)) continue;
    out.push(
      `lost or doubled: the server has a live entry no intent explains: ${view.guid} ${view.feed_url}` +
        (hint.length ? ` (that feed URL was written for ${hint.map((s) => model.describe(s)).join(' / ')})` : ''),
    );
  }
  for (const sub of model.subs) {
    const entry = entryOf.get(sub);
    const deleted = entry?.deleted !== undefined;
    if (!entry) {
      // Never reached the server: fine only when it was meant to go (a local add removed before it was sent).
      if (!model.mayBeDeleted(sub) && !sub.excused && !sub.maybe) out.push(`lost: ${model.describe(sub)} is not on the server`);
      continue;
    }
    const extra = late.get(entry.guid) ?? {};
    const allowedDeleted = [...(model.allowed(sub, 'deleted') ?? [false]), ...(extra.deleted ?? [])];
    if (!allowedDeleted.includes(deleted)) {
      out.push(`lost: ${model.describe(sub)} is ${deleted ? 'deleted' : 'live'} on the server (${entry.guid}), expected ${deleted ? 'live' : 'deleted'}`);
      continue;
    }
    if (deleted) continue;
    const actual: Record<Field, string | boolean> = { feedUrl: entry.feed_url, isSubscribed: entry.is_subscribed, guid: entry.guid, deleted };
    for (const field of ['feedUrl', 'isSubscribed', 'guid'] as const) {
      const intended = model.allowed(sub, field);
      if (intended === undefined) continue;
      const allowed = [...intended, ...(extra[field] ?? [])];
      if (field === 'guid' && sub.excused) continue;
      if (!allowed.includes(actual[field])) {
        out.push(`lost: ${field} of ${model.describe(sub)} is ${String(actual[field])} on the server, expected ${allowed.map(String).join(' or ')}`);
      }
    }
  }
  return out;
}

/** Run every check; throws an `InvariantViolation` listing all violations. */
export async function checkInvariants(ctx: CheckContext): Promise<void> {
  const violations: string[] = [];
  const local = ctx.model ? await localGuids(ctx.engine, ctx.model) : new Map<ModelSub, string>();
  const byLocalGuid = new Map([...local].map(([sub, guid]) => [guid, sub]));
  violations.push(...(await convergenceViolations(ctx, byLocalGuid)));
  if (ctx.model) violations.push(...modelViolations(ctx.model, ctx.server, local, ctx.abandoned ?? ctx.transport?.abandoned));
  violations.push(...(await cursorViolations(ctx.engine.dbName, ctx.server)));
  violations.push(...credentialViolations(ctx.server.origin, ctx.transport, ctx.other));
  if (violations.length) throw new InvariantViolation(violations);
}

/** The app's rule for a feed address, applied to the server's too: trimmed, absolute, http(s). */
export function isSafeFeedUrl(value: unknown): boolean {
  if (typeof value !== 'string' || value === '' || value !== value.trim()) return false;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Rows (the view the page is handed, and the server bases under it) whose feed URL is not a trimmed http(s) URL. */
export function unsafeUrlViolations(snapshot: Pick<StoreSnapshot, 'rows'>): string[] {
  const out: string[] = [];
  for (const row of snapshot.rows) {
    // Rows the page never sees (a failed add keeps an empty placeholder row until it is retried or discarded).
    if (row.base === undefined && row.pending === 0) continue;
    if (!isSafeFeedUrl(row.feedUrl)) out.push(`feed URL: the view holds ${row.guid} with feedUrl ${JSON.stringify(row.feedUrl)}`);
    else if (row.base && !isSafeFeedUrl(row.base.feedUrl)) out.push(`feed URL: the server base of ${row.guid} holds ${JSON.stringify(row.base.feedUrl)}`);
  }
  return out;
}

/** Rows of two accounts in one store: `accountOf` names the account a feed URL belongs to (undefined: either). */
export function accountMixViolations(snapshot: Pick<StoreSnapshot, 'rows'>, accountOf: (feedUrl: string) => string | undefined): string[] {
  const by = new Map<string, string[]>();
  for (const row of snapshot.rows) {
    for (const url of new Set([row.feedUrl, row.base?.feedUrl])) {
      const who = url === undefined ? undefined : accountOf(url);
      if (who !== undefined) (by.get(who) ?? by.set(who, []).get(who)!).push(`${row.guid} (${url})`);
    }
  }
  if (by.size < 2) return [];
  return [`accounts: one store holds rows of ${[...by.keys()].join(' and ')}: ${[...by].map(([who, rows]) => `${who}: ${rows.slice(0, 3).join(', ')}${rows.length > 3 ? ` and ${rows.length - 3} more` : ''}`).join('; ')}`];
}

/** Backoff settings as the engine's options give them. */
export interface BackoffSettings {
  baseDelay: number;
  maxDelay: number;
}

/**
 * The most attempts one change (or one pull) can make in `windowMs` on the backoff schedule alone: attempt
 * k+1 waits at least half of min(maxDelay, baseDelay * 2^k) (equal jitter: half fixed, half random), so
 * the shortest possible waits are summed until the window is full. With the scenarios' 10 ms / 1000 ms
 * this is 127 a minute: 8 attempts in the first 635 ms, then one per 500 ms at best.
 */
export function backoffAttempts({ baseDelay, maxDelay }: BackoffSettings, windowMs: number): number {
  let attempts = 1;
  let elapsed = 0;
  for (let k = 0; ; k++) {
    const wait = Math.max(1, Math.min(maxDelay, baseDelay * 2 ** k) / 2);
    if (elapsed + wait > windowMs) return attempts;
    elapsed += wait;
    attempts++;
  }
}

/** A pull may drain its pages this many times (an inconsistent listing is drained again). */
const DRAINS_PER_PULL = 3;

/**
 * No spin: in any simulated minute, no change (a subscription's path, an added or uploaded feed URL) and no
 * page of a pull is requested more often than the backoff schedule allows, plus what the app itself asked
 * for in that minute. The schedule's part is twice `backoffAttempts` (the change's own retries, and the pull
 * retries: a background pull that works forces the push of what waits out a backoff, by design). Each app
 * action (a `sync()`, an edit, a reopen, coming online, new credentials, a clear, a retry) may send each
 * change once more and drain a pull's pages up to 3 times. With the scenarios' options (10 ms / 1000 ms)
 * that is 252 a minute plus 3 per app action; the spins of issue 16 (#9, #14) make hundreds a second.
 */
export function spinViolations(audit: readonly AuditedRequest[], appActions: readonly number[], backoff: BackoffSettings, windowMs = 60_000): string[] {
  const allowed = 2 * backoffAttempts(backoff, windowMs);
  const actions = [...appActions].sort((a, b) => a - b);
  const actionsIn = (from: number, to: number) => upperBound(actions, to) - upperBound(actions, from - 1);
  const byKey = new Map<string, number[]>();
  for (const r of audit) for (const key of new Set(r.keys)) (byKey.get(key) ?? byKey.set(key, []).get(key)!).push(r.at);
  const out: string[] = [];
  for (const [key, times] of byKey) {
    let first = 0;
    for (let i = 0; i < times.length; i++) {
      while (times[i]! - times[first]! > windowMs) first++;
      const count = i - first + 1;
      const bound = allowed + DRAINS_PER_PULL * actionsIn(times[first]!, times[i]!);
      if (count > bound) {
        out.push(
          `spin: ${count} requests of ${key} within ${times[i]! - times[first]!} simulated ms (from ${times[first]} to ${times[i]}), ` +
            `where the backoff schedule allows ${allowed} a minute (2 × ${allowed / 2}) and the app acted ${actionsIn(times[first]!, times[i]!)} times`,
        );
        break;
      }
    }
  }
  return out;
}

/** How many sorted values are <= x. */
function upperBound(sorted: readonly number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The status while every request fails at a gateway (issue 25): never `online` (and `idle`), as if the server
 * answered. `requests` are the audited requests made since the gateway went down (none in flight before it).
 */
export function gatewayStatusViolations(status: SyncStatus, requests: readonly AuditedRequest[]): string[] {
  if (!requests.length || requests.some((r) => r.outcome !== 'proxied')) return [];
  if (status.online || status.network === 'online') {
    return [`status: ${status.phase}, network ${status.network} after ${requests.length} requests all got the gateway's error page (the server is down behind a proxy: unreachable)`];
  }
  return [];
}

/** No change was carried by two requests in flight at once (the transport's audit). */
export function overlapViolations(transport: Pick<Transport, 'overlaps'>): string[] {
  return transport.overlaps.slice(0, 5).map((o) => `two requests at once: ${o}`).concat(transport.overlaps.length > 5 ? [`two requests at once: and ${transport.overlaps.length - 5} more`] : []);
}
