// gPodder v2 / Nextcloud episode actions on the wire: validated on the way in, written on the way out in the
// one timestamp form every server accepts.
import { SyncError } from '../../src/errors.ts';
import { feedUrlOf } from '../feed-url.ts';
import { parseTimestamp } from '../time.ts';

/** A `play` action as uploaded: seconds throughout; `timestamp` is UTC `YYYY-MM-DDTHH:MM:SS`. */
export interface WirePlayAction {
  podcast: string;
  episode: string;
  guid?: string;
  device?: string;
  action: 'play';
  timestamp: string;
  started: number;
  position: number;
  /** Absent when the length is unknown. */
  total?: number;
}

/** A `play` action as read: its time in epoch ms (whole seconds); whole-second position and, when known, total. */
export interface PlayAction {
  podcast: string;
  episode: string;
  guid?: string;
  at: number;
  position?: number;
  total?: number;
}

/** A pull answer: the `play` actions (others dropped) and the server's `timestamp` (seconds). */
export interface WireEpisodeActions {
  actions: PlayAction[];
  /** How many actions the answer held, of any kind (mygpo pages by a full answer of 1,000). */
  count: number;
  /** Plays (and items) that did not validate: skipped, and counted in the run's report. */
  skipped: number;
  timestamp: number;
}

/** Longest position or duration taken from a server, in seconds (a year: anything longer is garbage). */
export const MAX_SECONDS = 366 * 24 * 3600;
/** Timestamps outside these years do not validate (the hostile-world rule for every server time). */
const EARLIEST = Date.UTC(1970, 0, 1);
const LATEST = Date.UTC(9999, 11, 31);

const bad = (detail: string) => new SyncError('bad-response', `episode actions: ${detail}`);

/** UTC `YYYY-MM-DDTHH:MM:SS` (no zone, no fraction): the form mygpo, Nextcloud and opodsync all read as UTC. */
export function formatActionTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19);
}

/** A server's seconds field, rounded: a number in [0, MAX_SECONDS]; `unknown` for -1, null or absent; else `bad`. */
function secondsField(value: unknown): number | 'unknown' | 'bad' {
  if (value === undefined || value === null || value === -1) return 'unknown';
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_SECONDS) return 'bad';
  return Math.round(value);
}

/**
 * One item of a pull: a usable `play`; null for another kind of action (`download`, `delete`, `new`: not
 * listening state, ignored); undefined for an item that does not validate, which the caller skips and counts
 * (not an object, a URL that is not an `http(s)` string, a bad stamp, a negative or -1 position, a bad total).
 * One bad item never refuses the answer. A total of -1, 0, null or none is unknown.
 */
export function parseAction(value: unknown): PlayAction | null | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const o = value as Record<string, unknown>;
  if (typeof o.action === 'string' && o.action.toLowerCase() !== 'play') return null;
  if (typeof o.action !== 'string') return undefined;
  const podcast = feedUrlOf(o.podcast);
  const episode = feedUrlOf(o.episode);
  if (podcast === undefined || episode === undefined) return undefined;
  const at = typeof o.timestamp === 'string' ? parseTimestamp(o.timestamp) : undefined;
  if (at === undefined || at < EARLIEST || at > LATEST) return undefined;
  const position = secondsField(o.position);
  const total = secondsField(o.total);
  if (typeof position !== 'number' || total === 'bad') return undefined;
  // Whole seconds: the wire's unit, and what every comparison uses (a fraction must not out-rank its second).
  const action: PlayAction = { podcast, episode, at: Math.floor(at / 1000) * 1000, position };
  if (typeof total === 'number' && total > 0) action.total = total;
  if (typeof o.guid === 'string' && o.guid !== '') action.guid = o.guid;
  return action;
}

/** Validate a pull answer: `{ actions: [...], timestamp }`; refuses a timestamp that is not a sane time. */
export function parseEpisodeActions(value: unknown, maxActions: number): WireEpisodeActions {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw bad('the answer is not a JSON object');
  const o = value as Record<string, unknown>;
  if (!Array.isArray(o.actions)) throw bad('actions is not a list');
  if (o.actions.length > maxActions) throw bad(`more than ${maxActions} actions in one answer`);
  const timestamp = o.timestamp;
  if (typeof timestamp !== 'number' || !Number.isFinite(timestamp) || timestamp < 0 || timestamp * 1000 > LATEST) {
    throw bad('timestamp is not a number of seconds');
  }
  const actions: PlayAction[] = [];
  let skipped = 0;
  for (const item of o.actions) {
    const action = parseAction(item);
    if (action) actions.push(action);
    else if (action === undefined) skipped++;
  }
  return { actions, count: o.actions.length, skipped, timestamp: Math.floor(timestamp) };
}
