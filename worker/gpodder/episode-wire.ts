// gPodder v2 / Nextcloud episode actions on the wire: validated on the way in, written on the way out in the
// one timestamp form every server accepts.
import { SyncError } from '../../src/errors.ts';
import { feedUrlOf } from '../feed-url.ts';
import { TooLarge } from '../http-body.ts';
import { createListReader } from '../json-stream.ts';
import { parseTimestamp } from '../time.ts';
import type { EpisodeAnswer, PlayAction } from '../episodes/actions.ts';

/** A pull answer read whole: the `play` actions (others dropped) and what else it held. */
export interface WireEpisodeActions extends EpisodeAnswer {
  actions: PlayAction[];
}

/** Longest action read (UTF-16 units): a real one is well under 4 KiB; a longer one is skipped unparsed. */
export const MAX_ACTION_CHARS = 64 * 1024;

/** Longest position or duration taken from a server, in seconds (a year: anything longer is garbage). */
export const MAX_SECONDS = 366 * 24 * 3600;
/** Timestamps outside the years 1970–9999 are refused (what every store and `Date` of this engine can hold). */
const EARLIEST = 0;
const LATEST = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

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

/** The server's `timestamp`: seconds within the years 1970–9999. */
function answerTimestamp(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value * 1000 > LATEST) throw bad('timestamp is not a number of seconds');
  return Math.floor(value);
}

/** Counts the items of an answer and hands each usable `play` to `take`: the one rule both readers follow. */
function actionTaker(take: (action: PlayAction) => void, maxActions: number) {
  let count = 0;
  let skipped = 0;
  return {
    item(value: unknown): void {
      // A cap, as the body's bytes are: a reconcile past it is recorded as tried (see `pullEpisodes`).
      if (++count > maxActions) throw new TooLarge(`episode actions: more than ${maxActions} actions in one answer`);
      // undefined: an item too long to be an action, never parsed (skipped); null: another kind (ignored).
      const action = value === undefined ? undefined : parseAction(value);
      if (action) take(action);
      else if (action === undefined) skipped++;
    },
    answer(listed: boolean, timestamp: unknown): EpisodeAnswer {
      if (!listed) throw bad('actions is not a list');
      return { count, skipped, timestamp: answerTimestamp(timestamp) };
    },
  };
}

/**
 * Read a pull answer as its text arrives: `{ actions: [...], timestamp }`, members in any order. Each usable
 * `play` goes to `take` as soon as it is read, so the answer is never held whole; `end()` refuses (`bad-response`)
 * a malformed envelope. At most `maxActions` actions.
 */
export function episodeActionsReader(take: (action: PlayAction) => void, maxActions: number): { write(text: string): void; end(): EpisodeAnswer } {
  const taker = actionTaker(take, maxActions);
  const reader = createListReader({ what: 'episode actions', list: 'actions', keep: ['timestamp'], maxChars: MAX_ACTION_CHARS, item: taker.item });
  return {
    write: reader.write,
    end() {
      const { listed, members } = reader.end();
      return taker.answer(listed, members.get('timestamp'));
    },
  };
}

/** Validate a pull answer already parsed: the checks `episodeActionsReader` makes as it reads. */
export function parseEpisodeActions(value: unknown, maxActions: number): WireEpisodeActions {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw bad('the answer is not a JSON object');
  const o = value as Record<string, unknown>;
  const actions: PlayAction[] = [];
  const taker = actionTaker((a) => actions.push(a), maxActions);
  if (Array.isArray(o.actions)) o.actions.forEach(taker.item);
  return { actions, ...taker.answer(Array.isArray(o.actions), o.timestamp) };
}
