// gPodder v2 / Nextcloud episode actions on the wire: validated on the way in, written on the way out in the
// one timestamp form every server accepts.
import { SyncError } from '../../src/errors.ts';
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
  total: number;
}

/** A `play` action as read: its time in epoch ms; position and total when the server gave usable ones. */
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
  timestamp: number;
}

/** Longest position or duration taken from a server, in seconds (a year: anything longer is garbage). */
export const MAX_SECONDS = 366 * 24 * 3600;
/** Timestamps outside these years are refused: no listening happened before 2000 or after 9999. */
const EARLIEST = Date.UTC(2000, 0, 1);
const LATEST = Date.UTC(9999, 11, 31);

const bad = (detail: string) => new SyncError('bad-response', `episode actions: ${detail}`);

/** UTC `YYYY-MM-DDTHH:MM:SS` (no zone, no fraction): the form mygpo, Nextcloud and opodsync all read as UTC. */
export function formatActionTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19);
}

/** A server's seconds field: a finite number in [0, MAX_SECONDS], or undefined (absent, -1, garbage). */
function secondsField(value: unknown): number | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_SECONDS) return undefined;
  return value;
}

/**
 * One action of a pull, or undefined when it is not a usable `play` (another kind, a position-less play, no
 * readable time): skipping one action never blocks the others. A non-object or a non-string URL is garbage
 * from the server, and refuses the answer.
 */
export function parseAction(value: unknown): PlayAction | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw bad('an action is not a JSON object');
  const o = value as Record<string, unknown>;
  if (typeof o.podcast !== 'string' || typeof o.episode !== 'string') throw bad('an action has no podcast or episode URL');
  if (typeof o.action !== 'string' || o.action.toLowerCase() !== 'play') return undefined;
  const at = typeof o.timestamp === 'string' ? parseTimestamp(o.timestamp) : undefined;
  if (at === undefined || at < EARLIEST || at > LATEST) return undefined;
  const position = secondsField(o.position);
  if (position === undefined) return undefined;
  const total = secondsField(o.total);
  const action: PlayAction = { podcast: o.podcast, episode: o.episode, at, position };
  if (total !== undefined && total > 0) action.total = total;
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
  for (const item of o.actions) {
    const action = parseAction(item);
    if (action) actions.push(action);
  }
  return { actions, count: o.actions.length, timestamp: Math.floor(timestamp) };
}
