// The chaos scenario's model of listening state: every change of an episode (this device's calls, another
// device's planted play actions, this device's own uploads as the server holds them) with the time it carries,
// and the invariants checked once the engine settled. Each field is a last-writer-wins register: the newest
// change wins, a tie in time goes to the greater value (worker/episodes/register.ts's rule, restated here so an
// engine bug in it does not hide itself).
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
  /** The step that made it (for the failure message). */
  step: number;
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

/** What a `play` action says, as the engine reads it (register.ts `fromPlay`): played = at the end; 0 = unplayed. */
export function playFields(position: number, total: number | undefined): ModelFields {
  const fields: ModelFields = { position };
  if (total !== undefined) {
    fields.total = total;
    fields.played = position >= total;
  }
  if (position === 0) fields.played = false;
  return fields;
}

type Key = keyof ModelFields;
const KEYS: Key[] = ['position', 'total', 'played'];

/** The newest surely-made change's value of a field, and its time (undefined: none). */
function newest(changes: readonly ModelChange[], key: Key): { value: number | boolean; at: number } | undefined {
  let best: { value: number | boolean; at: number } | undefined;
  for (const c of changes) {
    const value = c.fields[key];
    if (value === undefined || c.maybe) continue;
    if (!best || c.at > best.at || (c.at === best.at && value > best.value)) best = { value, at: c.at };
  }
  return best;
}

/**
 * Invariant 1 (converged): each field the engine holds is the newest change's value. Allowed too: a change that
 * may have happened (maybe) and is newer, and any change in the same second as the newest (the protocol's
 * timestamps have whole seconds: a pull reduces a second's actions to one, so a same-second race is the
 * protocol's, not the engine's).
 */
export function convergedViolations(story: EpisodeStory, state: EpisodeState | undefined): string[] {
  const out: string[] = [];
  for (const key of KEYS) {
    const expected = newest(story.changes, key);
    const held = state?.[key];
    const floor = expected ? Math.floor(expected.at / 1000) * 1000 : -Infinity;
    const allowed = new Set<unknown>(expected ? [expected.value] : [undefined]);
    for (const c of story.changes) if (c.fields[key] !== undefined && c.at >= floor && (c.maybe || c.at < floor + 1000)) allowed.add(c.fields[key]);
    // `played` reads false when no change set it.
    if (key === 'played' && allowed.has(undefined)) allowed.add(false);
    if (!allowed.has(held)) {
      out.push(`episodes converged: ${story.episode} (${story.podcast}) ${key} is ${String(held)}, the newest change says ${expected ? `${String(expected.value)} at ${new Date(expected.at).toISOString()}` : 'nothing'}`);
    }
  }
  return out;
}

/**
 * Invariant 2 (nothing queued is lost): this device's newest sure change of the episode is on the server (an
 * action of this device stamped in its second or later, under any URL its feed had), or a newer change of another device overtook it, or the
 * feed is not subscribed and the change still waits (pending) in the engine.
 */
export function lostViolations(
  story: EpisodeStory,
  log: readonly EpisodeActionView[],
  device: string | undefined,
  state: EpisodeState | undefined,
  subscribed: boolean,
  lastUploadWins: boolean,
): string[] {
  const mine = story.changes.filter((c) => c.source === 'local' && !c.maybe);
  if (!mine.length) return [];
  const last = mine.reduce((a, b) => (b.at > a.at ? b : a));
  const second = Math.floor(last.at / 1000);
  const feeds = feedsOf(story);
  const uploaded = log.some((a) => (device === undefined || a.device === device) && feeds.includes(a.podcast) && (a.guid === story.guid || a.episode === story.episode) && a.timestamp >= second);
  // The Nextcloud app keeps one row per episode, the last upload whatever its time: a later upload of another
  // device replaces this one's on the server (the engine keeps the newer local value, as invariant 1 checks).
  const overtaken = story.changes.some((c) => c.source === 'foreign' && (c.at > last.at || (lastUploadWins && c.step >= last.step)));
  const waits = !subscribed && state?.pending === true;
  if (uploaded || overtaken || waits) return [];
  return [`episodes lost: ${story.episode} (${story.podcast}): this device's change of step ${last.step} at ${new Date(last.at).toISOString()} (${JSON.stringify(last.fields)}) is neither on the server nor overtaken${subscribed ? '' : ' nor pending'} (engine: ${JSON.stringify(state)}; server: ${JSON.stringify(log.filter((x) => feeds.includes(x.podcast) && (x.guid === story.guid || x.episode === story.episode)))})`];
}

/** Invariant 3: no action for a feed that was never subscribed (no other device names one: each is this device's). */
export function strayViolations(stories: Iterable<EpisodeStory>, log: readonly EpisodeActionView[]): string[] {
  const strays = new Set([...stories].filter((s) => s.stray).map((s) => s.podcast));
  return log.filter((a) => strays.has(a.podcast)).map((a) => `episodes stray: an action for ${a.episode} of never-subscribed ${a.podcast} was uploaded`);
}
