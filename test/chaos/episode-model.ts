// The chaos scenario's model of listening state: every change of an episode (this device's calls, another
// device's planted play actions, this device's own uploads as the server holds them) with the time it carries,
// and the invariants checked once the engine settled. Each field is a last-writer-wins register, judged by the
// decided rule (issue 18), restated here so an engine bug in it does not hide itself: stamps compare in whole
// seconds; in one second a pending local change wins, else the later in the server's answer.
import type { EpisodeState } from '../../src/types.ts';
import type { EpisodeActionView } from '../server/gpodder/types.ts';

/** The fields one change names. */
export interface ModelFields {
  position?: number;
  total?: number;
  played?: boolean;
}

/** One change of an episode: who made it, when (epoch ms, the time it carries), and whether it surely happened. */
export interface ModelChange {
  source: 'local' | 'foreign' | 'upload';
  fields: ModelFields;
  at: number;
  /** A crash cut the call off, a clear wiped the queue, or the upload may never have been stored: it may or may not count. */
  maybe: boolean;
  /** The step that made it (for the failure message; among this device's changes of one second, the later call wins). */
  step: number;
  /**
   * Where the server's answer lists it (the checker sets it from the server's log): a foreign action's place, a
   * local change's upload in its second (the last of this device's there); Infinity for the local change still
   * pending at the end (it wins its second); undefined when not on the server (before all of its second).
   */
  rank?: number;
}

/** One episode's story. */
export interface EpisodeStory {
  podcast: string;
  episode: string;
  guid: string;
  /** Its feed was never subscribed by anyone: nothing of it may be uploaded. */
  stray: boolean;
  /**
   * Where this device moved its feed (update(url, { feedUrl }), in order): the episode moves with the feed, so its
   * state and uploads may be under any of these URLs (a move refused, or cut off by a crash, leaves it at an
   * earlier one), never under two at once.
   */
  moves?: string[];
  changes: ModelChange[];
}

/** Every feed URL the episode may be under: the one it was touched under, then where its feed was moved. */
export function feedsOf(story: EpisodeStory): string[] {
  return [story.podcast, ...(story.moves ?? [])];
}

/**
 * What a `play` action says, as the engine reads it (register.ts `fromPlay`): played = the position reached the
 * length (without a length: not played), a position past it clamped.
 */
export function playFields(position: number, total: number | undefined): ModelFields {
  const fields: ModelFields = { position: total === undefined ? position : Math.min(position, total), played: total !== undefined && position >= total };
  if (total !== undefined) fields.total = total;
  return fields;
}

type Key = keyof ModelFields;
const KEYS: Key[] = ['position', 'total', 'played'];

const secondOf = (at: number) => Math.floor(at / 1000);

/** Whether `a` wins over `b` by the rule: the later second; in one second the later in the answer, then the later call. */
export function laterChange(a: ModelChange, b: ModelChange): boolean {
  if (secondOf(a.at) !== secondOf(b.at)) return secondOf(a.at) > secondOf(b.at);
  const [ra, rb] = [a.rank ?? -1, b.rank ?? -1];
  return ra !== rb ? ra > rb : a.step > b.step;
}

/** The surely-made change that holds a field by the rule (undefined: none named it). */
function winner(changes: readonly ModelChange[], key: Key): ModelChange | undefined {
  let best: ModelChange | undefined;
  for (const c of changes) if (c.fields[key] !== undefined && !c.maybe && (!best || laterChange(c, best))) best = c;
  return best;
}

/**
 * Invariant 1 (converged): each field the engine holds is the value of the change that wins it by the rule.
 * Allowed too: the value of a change that may have happened (maybe) in the winner's second or later.
 */
export function convergedViolations(story: EpisodeStory, state: EpisodeState | undefined): string[] {
  const out: string[] = [];
  for (const key of KEYS) {
    const expected = winner(story.changes, key);
    const held = state?.[key];
    const allowed = new Set<unknown>([expected?.fields[key]]);
    for (const c of story.changes) if (c.maybe && c.fields[key] !== undefined && (!expected || secondOf(c.at) >= secondOf(expected.at))) allowed.add(c.fields[key]);
    // `played` reads false when no change set it.
    if (key === 'played' && allowed.has(undefined)) allowed.add(false);
    if (!allowed.has(held)) {
      const says = expected ? `${String(expected.fields[key])} (${expected.source}, step ${expected.step}) at ${new Date(expected.at).toISOString()}` : 'nothing';
      out.push(`episodes converged: ${story.episode} (${story.podcast}) ${key} is ${String(held)}, the change that wins it says ${says}`);
    }
  }
  return out;
}

/**
 * Invariant 2 (nothing queued is lost): this device's newest sure change of the episode is on the server (an
 * action of this device stamped in its second or later, under any URL its feed had: `feeds`, by default where it
 * was touched and where its feed moved), or a change of another
 * device in a later second overtook it, or one in its second already said the same, or the feed is not
 * subscribed and the change still waits (pending) in the engine.
 */
export function lostViolations(
  story: EpisodeStory,
  log: readonly EpisodeActionView[],
  device: string | undefined,
  state: EpisodeState | undefined,
  subscribed: boolean,
  lastUploadWins: boolean,
  feeds: readonly string[] = feedsOf(story),
): string[] {
  const mine = story.changes.filter((c) => c.source === 'local' && !c.maybe);
  if (!mine.length) return [];
  const last = mine.reduce((a, b) => (b.at > a.at || (b.at === a.at && b.step > a.step) ? b : a));
  const second = secondOf(last.at);
  const uploaded = log.some((a) => (device === undefined || a.device === device) && feeds.includes(a.podcast) && (a.guid === story.guid || a.episode === story.episode) && a.timestamp >= second);
  // Only a later second overtakes a pending change (it wins its own). The Nextcloud app keeps one row per episode,
  // the last upload whatever its time: a later upload of another device replaces this one's on the server (the
  // engine keeps the newer local value, as invariant 1 checks).
  const overtaken = story.changes.some((c) => c.source === 'foreign' && (secondOf(c.at) > second || (lastUploadWins && c.step >= last.step)));
  // A mark of what a change of the same second already set changed nothing, so there was nothing to upload.
  const held = story.changes.some((c) => c.source === 'foreign' && !c.maybe && secondOf(c.at) === second && Object.entries(last.fields).every(([k, v]) => c.fields[k as Key] === v));
  const waits = !subscribed && state?.pending === true;
  if (uploaded || overtaken || held || waits) return [];
  return [`episodes lost: ${story.episode} (${story.podcast}): this device's change of step ${last.step} at ${new Date(last.at).toISOString()} (${JSON.stringify(last.fields)}) is neither on the server nor overtaken${subscribed ? '' : ' nor pending'} (engine: ${JSON.stringify(state)}; server: ${JSON.stringify(log.filter((x) => feeds.includes(x.podcast) && (x.guid === story.guid || x.episode === story.episode)))})`];
}

/** Invariant 3: no action for a feed that was never subscribed (no other device names one: each is this device's). */
export function strayViolations(stories: Iterable<EpisodeStory>, log: readonly EpisodeActionView[]): string[] {
  const strays = new Set([...stories].filter((s) => s.stray).map((s) => s.podcast));
  return log.filter((a) => strays.has(a.podcast)).map((a) => `episodes stray: an action for ${a.episode} of never-subscribed ${a.podcast} was uploaded`);
}
