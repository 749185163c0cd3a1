// Pull listening state: every server filters episode actions on the action's own time (set by the device that
// made it), so an action uploaded late with an old time is missed by a plain `since`. Each pull re-reads an
// overlap window before the cursor, and a full reconcile (everything, reduced to the newest per episode) runs
// when the store has no cursor yet and then at a slow interval. Actions are reduced as they are read: a full
// history is never held, only the newest of each episode.
import type { SyncError } from '../../src/errors.ts';
import type { EpisodeRef } from '../../src/types.ts';
import type { EpisodeTransport, PlayAction } from './actions.ts';
import { MYGPO_PAGE } from '../gpodder/episodes.ts';
import { TooLarge, isTooLarge } from '../http-body.ts';
import { mediaKey } from './identity.ts';
import { fromPlay, type FieldChange } from './register.ts';
import type { EpisodeCursor, EpisodeStore } from './store.ts';

/** Seconds re-read before the cursor on every pull: uploads a few minutes late (throttled, offline a while). */
export const EPISODE_OVERLAP = 15 * 60;
/** ms between full reconciles (since the first second), which catch actions uploaded any time late. */
export const RECONCILE_INTERVAL = 24 * 3600 * 1000;
/** Seconds pulled when a store whose history was too large to reconcile has no cursor yet: the last 30 days. */
export const RECENT_WINDOW = 30 * 24 * 3600;
/** Pages one pull follows at most (mygpo's 1,000 actions each): a server that never ends a drain is refused. */
const MAX_PAGES = 1000;
/** Most episodes one pull holds while it reads (a long-used account names tens of thousands). */
export const MAX_EPISODES_PER_PULL = 200_000;

const FIELDS = ['position', 'total', 'played'] as const;

/** The newest actions per episode, kept as they are read. */
export interface Reduction {
  take(action: PlayAction): void;
  /** What is kept, in the order read: applying it gives the store what applying every action taken would. */
  actions(): PlayAction[];
}

/**
 * Keep the newest action per episode as actions come. An episode is the identity rule's (identity.ts): within its
 * podcast, its guid, else its media URL without query (two guids are two episodes). The store applies each field
 * of an action as a register (register.ts: times are whole seconds, and in one second the later in the answer
 * wins), so what is kept is, per field, the action that field would end with: at most three actions per episode
 * (an action without a total says nothing of the total, which an older one may still give).
 */
export function createReduction(maxEpisodes = MAX_EPISODES_PER_PULL): Reduction {
  const kept = new Map<string, Partial<Record<keyof FieldChange, { action: PlayAction; seq: number }>>>();
  let seq = 0;
  return {
    take(action) {
      const key = `${action.podcast}\n${action.guid === undefined ? `m:${mediaKey(action.episode)}` : `g:${action.guid}`}`;
      let held = kept.get(key);
      if (!held) {
        if (kept.size >= maxEpisodes) throw new TooLarge(`episode actions: more than ${maxEpisodes} episodes in one pull`);
        held = {};
        kept.set(key, held);
      }
      const change = fromPlay(action.position ?? 0, action.total);
      seq++;
      for (const field of FIELDS) {
        if (change[field] === undefined) continue;
        const now = held[field];
        if (!now || action.at >= now.action.at) held[field] = { action, seq };
      }
    },
    actions() {
      const out = new Map<PlayAction, number>();
      for (const held of kept.values()) for (const field of FIELDS) if (held[field]) out.set(held[field].action, held[field].seq);
      // Applied in the order read: in one second, the later in the answer must still win at the store.
      return [...out].sort((a, b) => a[1] - b[1]).map(([action]) => action);
    },
  };
}

/** Keep the newest action per episode (see `createReduction`): a full history shrinks to state. */
export function newestPerEpisode(actions: readonly PlayAction[]): PlayAction[] {
  const reduction = createReduction(Infinity);
  for (const action of actions) reduction.take(action);
  return reduction.actions();
}

/** What a pull did: the refs whose state changed, the actions skipped as invalid, and the full reconcile's refusal when it was too large. */
export interface EpisodePull {
  refs: EpisodeRef[];
  skipped: number;
  /** The answer to the full reconcile was too large to read: incremental pulls went on, the next reconcile waits an interval. */
  refused?: SyncError;
}

/** Pull episode actions into the store (`now`: device ms). */
export async function pullEpisodes(transport: EpisodeTransport, store: EpisodeStore, now: number): Promise<EpisodePull> {
  const { cursor, reconciledAt: recorded, capped } = await store.cursor();
  // A reconcile time in the future is a clock that stepped back: the interval counts from now (saved so), neither
  // waited out from the old time nor skipped: a reconcile refused past the cap must not be asked for again at once.
  const reconciledAt = recorded! > now ? now : recorded;
  const full = reconciledAt === undefined || now - reconciledAt >= RECONCILE_INTERVAL;
  // 1, not 0: the Nextcloud app reads since=0 as "one week ago".
  const incremental = cursor === undefined ? Math.max(1, Math.floor(now / 1000) - RECENT_WINDOW) : Math.max(1, cursor - EPISODE_OVERLAP);
  if (!full) return drain(transport, store, incremental, cursor, reconciledAt, capped);
  try {
    return await drain(transport, store, 1, cursor, now);
  } catch (error) {
    if (!isTooLarge(error)) throw error;
    // Too large to read whole (the cap bounds the wait; the reduction bounds memory): nothing of it is written.
    // The attempt counts as this interval's reconcile, written first so that no run asks for everything again
    // before a whole interval has passed (not even after the incremental pull below fails), and pulls go on
    // incrementally from the cursor.
    const attempt: EpisodeCursor = { reconciledAt: now, capped: true };
    if (cursor !== undefined) attempt.cursor = cursor;
    await store.applyRemote([], attempt);
    return { ...(await drain(transport, store, incremental, cursor, now, true)), refused: error };
  }
}

/** Drain pages from `since`, reduced as they come, and write them with the new cursor in one transaction. */
async function drain(transport: EpisodeTransport, store: EpisodeStore, since: number, cursor: number | undefined, reconciledAt: number | undefined, capped?: true): Promise<EpisodePull> {
  const newest = createReduction();
  let timestamp = since;
  let skipped = 0;
  for (let page = 0; ; page++) {
    if (page >= MAX_PAGES) throw new TooLarge(`episode actions: more than ${MAX_PAGES} pages in one pull`);
    const answer = await transport.pull(since, newest.take);
    skipped += answer.skipped;
    timestamp = answer.timestamp;
    // mygpo answers at most 1,000 actions, its `timestamp` the last one's; its `since` is inclusive, so the
    // boundary repeats. A full page whose time did not move on would repeat forever: step past that second
    // (what more than 1,000 actions stamped in that one second hold beyond the first 1,000 is not read).
    if (answer.count < MYGPO_PAGE) break;
    since = answer.timestamp > since ? answer.timestamp : since + 1;
  }
  // A timestamp that went backwards is a server reset or restore: the next pull reads everything again, unless
  // everything was too large to read this interval (it still is: the refusal stands until the interval is over).
  const reset = cursor !== undefined && timestamp < cursor - EPISODE_OVERLAP && !capped;
  const save: EpisodeCursor = { cursor: timestamp };
  if (!reset && reconciledAt !== undefined) save.reconciledAt = reconciledAt;
  if (capped) save.capped = true;
  return { refs: await store.applyRemote(newest.actions(), save), skipped };
}
