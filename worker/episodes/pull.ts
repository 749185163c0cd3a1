// Pull listening state: every server filters episode actions on the action's own time (set by the device that
// made it), so an action uploaded late with an old time is missed by a plain `since`. Each pull re-reads an
// overlap window before the cursor, and a full reconcile (everything, reduced to the newest per episode) runs
// when the store has no cursor yet and then at a slow interval.
import { SyncError } from '../../src/errors.ts';
import type { EpisodeRef } from '../../src/types.ts';
import type { PlayAction } from '../gpodder/episode-wire.ts';
import { MYGPO_PAGE, type EpisodeTransport } from '../gpodder/episodes.ts';
import type { EpisodeCursor, EpisodeStore } from './store.ts';

/** Seconds re-read before the cursor on every pull: uploads a few minutes late (throttled, offline a while). */
export const EPISODE_OVERLAP = 15 * 60;
/** ms between full reconciles (since the first second), which catch actions uploaded any time late. */
export const RECONCILE_INTERVAL = 24 * 3600 * 1000;
/** Pages one pull follows at most (mygpo's 1,000 actions each): a server that never ends a drain is refused. */
const MAX_PAGES = 1000;

/**
 * Keep the newest action per episode (by guid, else media URL, within its podcast): a full history shrinks to
 * state. Times are whole seconds; in one second the later in the answer wins (the rule every device applies).
 * The total is a register of its own: when the newest action has none, the newest that had one goes before it.
 */
export function newestPerEpisode(actions: readonly PlayAction[]): PlayAction[] {
  const newest = new Map<string, PlayAction>();
  const sized = new Map<string, PlayAction>();
  for (const action of actions) {
    const key = `${action.podcast}\n${action.guid ?? action.episode.replace(/[?#].*$/, '')}`;
    const held = newest.get(key);
    if (!held || action.at >= held.at) newest.set(key, action);
    const withTotal = sized.get(key);
    if (action.total !== undefined && (!withTotal || action.at >= withTotal.at)) sized.set(key, action);
  }
  return [...newest].flatMap(([key, action]) => {
    const withTotal = sized.get(key);
    return withTotal && withTotal !== action ? [withTotal, action] : [action];
  });
}

/** Pull episode actions into the store; returns the refs whose state changed and how many actions did not validate. */
export async function pullEpisodes(transport: EpisodeTransport, store: EpisodeStore, now: number): Promise<{ changed: EpisodeRef[]; skipped: number }> {
  const { cursor, reconciledAt } = await store.cursor();
  // A reconcile time in the future is a clock that stepped back: reconcile now rather than wait it out.
  const full = cursor === undefined || reconciledAt === undefined || reconciledAt > now || now - reconciledAt >= RECONCILE_INTERVAL;
  // 1, not 0: the Nextcloud app reads since=0 as "one week ago".
  let since = full ? 1 : Math.max(1, cursor - EPISODE_OVERLAP);
  const actions: PlayAction[] = [];
  let timestamp = since;
  let skipped = 0;
  for (let page = 0; ; page++) {
    if (page >= MAX_PAGES) throw new SyncError('bad-response', `episode actions: more than ${MAX_PAGES} pages in one pull`);
    const answer = await transport.pull(since);
    actions.push(...answer.actions);
    skipped += answer.skipped;
    timestamp = answer.timestamp;
    // mygpo answers at most 1,000 actions, its `timestamp` the last one's; its `since` is inclusive, so the
    // boundary repeats. A full page whose time did not move on would repeat forever: step past that second.
    if (answer.count < MYGPO_PAGE) break;
    since = answer.timestamp > since ? answer.timestamp : since + 1;
  }
  // A timestamp that went backwards is a server reset or restore: the next pull reads everything again.
  const reset = cursor !== undefined && timestamp < cursor - EPISODE_OVERLAP;
  const save: EpisodeCursor = { cursor: timestamp };
  if (!reset && (full ? now : reconciledAt) !== undefined) save.reconciledAt = full ? now : reconciledAt!;
  return { changed: await store.applyRemote(newestPerEpisode(actions), save), skipped };
}
