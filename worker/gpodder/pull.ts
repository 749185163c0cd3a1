// gPodder pull: one request for every change since the cursor (no paging in this protocol), written in batches.
import type { Http } from '../http.ts';
import { formatTimestamp } from '../time.ts';
import type { PullSink, RemoteEntry } from '../transport.ts';
import { renames } from './renames.ts';
import { parseChanges, type WireChanges } from './wire.ts';

/**
 * Entries per store transaction. An answer has no pages, but a first pull of a large account is one body:
 * written whole it would be one transaction holding every row; in batches of a page's size (the OPA default)
 * each commits on its own, and the cursor only with the last.
 */
export const PULL_BATCH = 500;

/** What pulls keep between them (the transport's memo): see `pullGpodder`. */
export interface PullMemo {
  /** Timestamps (s) of this device's uploads since the last pull. */
  marks: readonly number[];
  /** ms added to the server's clock to order its entries after it went back. */
  offset: number;
  /** The newest time (s) the server gave before its clock went back, until it passes it again. */
  behind?: number;
  /** Until then, every pull reads the full listing: the server lists what it stamped ahead of its clock (see `pullGpodder`). */
  full?: boolean;
  /** The last pull's answer time (s) and this device's time (ms) then. */
  last?: { timestamp: number; at: number };
}

/** What a pull committed, and the memo for the next one. */
export interface PullResult {
  committed: boolean;
  memo: Omit<PullMemo, 'marks'>;
}

/** Seconds a server's clock may run ahead of this device's between two pulls before it counts as a step forward. */
export const CLOCK_JUMP = 300;

/**
 * Pull the changes since the sink's cursor (seconds on the wire, ms in the store), then since each of this
 * device's uploads after it (`marks`, seconds). mygpo answers with the net effect of the window's actions
 * (+1 per subscribe, -1 per unsubscribe): an upload of ours and another device's undoing of it inside one
 * window cancel out, and the undo would never be seen. A window that starts at our upload shows it. The
 * later windows' answers are applied last (they are the newer word on what they list).
 *
 * `offset` (ms) is added to the server's clock to order entries against what the store holds: 0 until the
 * server's clock goes back, then enough to put its new clock after every stamp it gave before (a reset or
 * restored server's answers must win over the state it gave before, and so must its later changes).
 *
 * `behind` (s) is the newest time the server gave before its clock went back. Until its clock passes it again,
 * its full listing may hide what it stamped later (mygpo lists nothing after its "now"): a subscribed row it
 * leaves out whose server word is later than the listing's time is said again, not tombstoned (every such row,
 * when the clock went back again before it caught up: the hidden stretch then reaches back past the stamps
 * this store holds). Once it passes, a window from before that time mixes changes stamped on both sides of the
 * step (mygpo nets them by their stamps), so the pull reads one full listing instead. So does a pull whose
 * answer's clock moved on more than this device's since the last one (`CLOCK_JUMP`): that is a server clock
 * coming back from a step this store did not see (it was cleared, or opened, meanwhile).
 *
 * A full listing read for any of these is the server's word (`RemoteEntry.authoritative`): what it lists
 * applies to every row whatever the stamps stored from the other side of the step say.
 *
 * After a step back, the window from the listing's time asks whether the server lists what it stamped ahead of
 * its clock. An action log that does (an add from before the step is in every window from before its stamp)
 * nets a window's old actions with its new ones: another device's remove after the step cancels out against
 * the old add, or the old add comes back after the listing applied the remove. Its full listing nets every
 * action, so it is exact: nothing is said again, and until its clock passes `behind` each pull reads the full
 * listing instead of windows (one request, as a window is). A server that hides what it stamped ahead (mygpo
 * bounds every answer by its "now") keeps the windows, each word of which stands only where its full listing,
 * read with them, says the same; the listing's hidden rows are said again.
 */
export async function pullGpodder(http: Http, path: string, sink: PullSink, memo: PullMemo = { marks: [], offset: 0 }, now = 0): Promise<PullResult> {
  const { marks } = memo;
  let { offset, behind, full } = memo;
  // The last answer's own `timestamp`, as the protocol says. No overlap: these servers answer with the net
  // effect since `since`, so re-asking a window that holds this device's own upload would net out another
  // device's undoing of it. (mygpo's `since` is exclusive with whole seconds: a change made in the second of
  // the last answer, after it, is not seen until it changes again. opodsync's is inclusive: no such gap.)
  const floor = Math.floor((sink.cursor ?? 0) / 1000);
  let since = full ? 0 : floor;
  let windows = [since, ...[...new Set(marks)].filter((m) => !full && m > since).sort((a, b) => a - b)];
  let answers = await ask(http, path, windows, floor);
  // An answer older than the cursor: the server was reset or restored from a backup, or its clock stepped back,
  // and its changes since our cursor are not changes since our state. Or its clock is past the step again (or
  // jumped): a window would mix stamps from both sides. Either way, ask for everything, as a first pull does.
  const regressed = !answers;
  /** Whether this is a full listing read because the server's clock stepped. */
  let stepped = !!full;
  /** With a listing from a server whose clock went back: rows whose server word is later than this may be hidden. */
  let restate: number | undefined;
  if (!answers || (!full && (behind !== undefined ? newest(answers) >= behind : jumped(memo.last, newest(answers), now)))) {
    stepped = true;
    since = 0;
    windows = [0];
    answers = (await ask(http, path, windows))!;
    const time = answers[0]!.timestamp;
    if (regressed) {
      // (No answer is a clock that went back again meanwhile: the next pull sees that step.)
      const ahead = (await ask(http, path, [time]))?.[0];
      full = !!(ahead?.add.length || ahead?.remove.length);
      // The listing's time on the store's timeline (the offset it held until now).
      if (!full) restate = memo.behind !== undefined ? 0 : time * 1000 + offset;
      const before = Math.max(sink.cursor ?? 0, ...marks.map((m) => m * 1000));
      offset = Math.max(offset, offset + before - time * 1000 + 1000);
      behind = Math.max(behind ?? 0, Math.floor(before / 1000));
    }
  }
  // Past the step again (or never behind): windows from here on.
  if (!(behind! > newest(answers))) behind = full = undefined;
  const entries = new Map<string, RemoteEntry>();
  for (const changes of answers) collect(changes, entries, offset, stepped);
  if (behind !== undefined && !stepped) {
    // Windows from a server that hides what it stamped ahead, while its clock is behind: as it passes the stamps
    // from before the step again, a window holds old actions without later ones stamped before the window (a
    // subscribe from before the step comes back over a remove made after it: gPodder seed 820). The listing nets
    // them all: a window's word stands only where it says the same (a later change shows in the next window).
    const list = (await ask(http, path, [0]))![0]!;
    for (const [url, e] of entries) if (e.isSubscribed !== list.add.includes(e.newGuid ?? url)) entries.delete(url);
  }
  // The next `since` is the newest answer's own clock (never the old cursor: that one may be a reset server's past).
  const cursor = newest(answers) * 1000;
  // Everything since 0 is the whole list: a row it does not name has no record on the server (into an empty
  // store there is nothing else to find).
  const listed = since === 0 && !sink.empty ? new Set([...entries.values()].map((e) => e.newGuid ?? e.guid)) : undefined;
  // The URLs first, then the old names leading to them (a name's target is then stored before it).
  const all = [...entries.values()].sort((a, b) => Number(!a.standalone) - Number(!b.standalone));
  let at = 0;
  for (; at + PULL_BATCH < all.length; at += PULL_BATCH) await sink.apply(all.slice(at, at + PULL_BATCH));
  // The last batch (empty when nothing changed) carries the cursor; `restate` only goes with a listing.
  const committed = await sink.apply(all.slice(at), { cursor, listed, restate: listed && restate });
  sink.progress({ pages: windows.length, entries: entries.size });
  return { committed, memo: { offset, last: { timestamp: cursor / 1000, at: now }, behind, full } };
}

const newest = (answers: readonly WireChanges[]): number => Math.max(...answers.map((a) => a.timestamp));

/** Whether the server's clock moved on more than this device's (`CLOCK_JUMP` of slack) since the last pull. */
function jumped(last: PullMemo['last'], timestamp: number, now: number): boolean {
  return last !== undefined && timestamp - last.timestamp > Math.max(0, (now - last.at) / 1000) + CLOCK_JUMP;
}

/** Ask each window in turn; undefined when an answer's clock is before the time it was asked from, or `floor`. */
async function ask(http: Http, path: string, windows: readonly number[], floor = 0): Promise<WireChanges[] | undefined> {
  const answers: WireChanges[] = [];
  for (const from of windows) {
    const changes = parseChanges((await http.request('GET', http.url(path, { since: from }))).body);
    if (changes.timestamp < Math.max(from, floor)) return undefined;
    answers.push(changes);
  }
  return answers;
}

/** Fold one answer into the entries (a later answer's word on a URL replaces an earlier one's). */
function collect(changes: WireChanges, entries: Map<string, RemoteEntry>, offset: number, authoritative: boolean): void {
  // The answer is the server's state at its `timestamp`: every entry is stamped with it (and ordered by it, on
  // the timeline kept across the server's clock going back).
  const stamp = formatTimestamp(changes.timestamp * 1000);
  const at = changes.timestamp * 1000 + offset;
  const put = (url: string, isSubscribed: boolean) =>
    entries.set(url, { guid: url, feedUrl: url, isSubscribed, subscriptionChanged: stamp, at, dataAt: at, standalone: true, ...(authoritative && { authoritative }) });
  for (const url of changes.add) put(url, true);
  // A URL in both lists (a server that does not net them out) ends removed, as opodsync stores it.
  for (const url of changes.remove) put(url, false);
  for (const [from, to] of renames(changes.update_urls)) {
    // The server renamed a URL: like a guid chain, the old one leads to the new one. The target is the URL the
    // chain ends at, never another old name, so a row's guid stays its feed URL.
    const entry = to === '' ? undefined : entries.get(to);
    if (entry?.standalone) entries.set(from, { ...entry, guid: from, newGuid: to, guidChanged: stamp, standalone: false });
  }
}
