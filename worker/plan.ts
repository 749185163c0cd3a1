// The one plan for what goes out: which queued changes the next push carries (a tab's worker, the service worker)
// or the page's last copy, read from the queue, each change's delivery state and the server's holds; the transport
// renders them as requests. The push sends the plan; the copy is the same plan, its harmless requests kept.
import type { StoredChange } from '../src/schema.ts';
import { dueAt, isReady } from './hold.ts';
import type { Transport } from './transport.ts';

/** The first live change of each subscription (order per subscription is kept by sending only heads). */
export function heads(changes: StoredChange[]): StoredChange[] {
  const byRow = new Map<string, StoredChange>();
  for (const change of changes) if (!byRow.has(change.guid)) byRow.set(change.guid, change);
  return [...byRow.values()];
}

/** An update that only sets the subscribed flag: the server entity it addresses is the same after it. */
const flagOnly = (c: StoredChange) => c.kind === 'update' && c.state === 'queued' && c.change?.feedUrl === undefined && c.change?.guid === undefined;

/**
 * The heads, each followed (when it and they only set the flag) by the flag changes queued behind it: one
 * request of a batching protocol carries them in order, the last one's word winning. A change queued behind
 * one that was in flight when it was made would otherwise cost an upload of its own.
 */
function withFollowers(changes: StoredChange[], chosen: StoredChange[], open: (c: StoredChange) => boolean): StoredChange[] {
  const heads = new Set(chosen.filter(flagOnly).map((c) => c.guid));
  const out = [...chosen];
  const cut = new Set<string>();
  const seen = new Set<string>();
  for (const change of changes) {
    const first = !seen.has(change.guid);
    seen.add(change.guid);
    if (first || !heads.has(change.guid) || cut.has(change.guid)) continue;
    if (flagOnly(change) && open(change)) out.push(change);
    else cut.add(change.guid);
  }
  return out;
}

/** What a plan is made for. */
export interface PlanFor {
  /** Steady device time, in which holds are set and read. */
  now: number;
  /** Whether the server answered lately (a pull, or a request of this run): a backoff is over, never a Retry-After. */
  answered?: boolean;
  /** Whether a change may be taken (the push: not being sent, not tried in this run; the copy: every queued change). */
  open(c: StoredChange): boolean;
  /** The page's last copy: every queued change the rule lets go, whatever the holds (nobody reads its answers). */
  copy?: boolean;
}

/** The changes the next push (or copy) carries, and when a push should look again. */
export interface Choice {
  going: StoredChange[];
  /** Steady time a change waiting now is due, if any (the end of the server's hold while it runs). */
  wakeAt: number | undefined;
}

/**
 * Choose what goes. The backoff belongs to the server: while the hold a failed request left on the changes it
 * carried runs (kept with them in the queue, so every context that pushes reads it), nothing goes and new edits
 * wait for the request that goes when it ends, or when the server answers; a Retry-After holds even that. Then
 * every head goes (a deletion job at its poll time), with, for a batching protocol, the flag changes behind it.
 */
export function choose(pending: StoredChange[], transport: Transport, how: PlanFor): Choice {
  const all = heads(pending);
  const { now, open } = how;
  const ready = (c: StoredChange) => how.copy || isReady(c, now, how.answered!);
  const held = all.filter((c) => c.state === 'queued' && !ready(c));
  let going = held.length ? [] : all.filter((c) => open(c) && ready(c));
  // What is not going waits: for the hold's end, its poll time, or (tried in this run) the next run.
  const waiting = held.length ? held : all.filter((c) => !going.includes(c));
  if (transport.batching === 'all') going = withFollowers(pending, going, open);
  return { going, wakeAt: waiting.length ? Math[held.length ? 'max' : 'min'](...waiting.map((c) => dueAt(c, now))) : undefined };
}
