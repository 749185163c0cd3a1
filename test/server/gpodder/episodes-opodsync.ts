// Episode actions as opodsync 0.5.3 keeps them (both path families): an append-only log, every upload
// a new row, inclusive `since`, fields echoed verbatim, and an unknown feed subscribed as a side effect.
import type { Account } from './accounts.ts';
import type { ActionRecord } from './episode-store.ts';
import type { EpisodeUploadOutcome } from './episodes-mygpo.ts';
import { opodsyncSince } from './since.ts';
import { opodsyncTime, parseActionTime } from './stamp.ts';
import type { WireEpisodeActionOut, WireEpisodeActions } from './types.ts';
import { isObject } from '../validate.ts';

const URL_START = /^https?:\/\/[^/]+/;

class Refusal extends Error {
  constructor(readonly status: 400 | 500, message: string) {
    super(message);
  }
}

/** PHP's string conversion of a JSON scalar; arrays and objects are a TypeError (500). */
function phpString(value: unknown, what: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : String(value).replace('e+', 'E+');
  if (typeof value === 'boolean') return value ? '1' : '';
  throw new Refusal(500, `TypeError: ${what} must be of type string, ${Array.isArray(value) ? 'array' : 'object'} given`);
}

/** PHP's `empty()` of a decoded JSON value. */
const phpEmpty = (v: unknown): boolean =>
  v === undefined || v === null || v === false || v === 0 || v === '' || v === '0' || (Array.isArray(v) && v.length === 0);

/** opodsync's `validateURL`. */
function url(value: unknown): string {
  const text = phpString(value, 'validateURL(): Argument #1 ($url)');
  if (!URL_START.test(text)) throw new Refusal(400, `Invalid URL: ${text}`);
  return text;
}

/** One item checked and turned into a row, or a Refusal as opodsync answers it. */
function row(item: unknown, now: number): ActionRecord {
  if (!isObject(item) || item.podcast == null || item.action == null || item.episode == null) {
    throw new Refusal(400, 'Missing required key in action');
  }
  const podcast = url(item.podcast);
  const episode = url(item.episode);
  let at = now;
  if (!phpEmpty(item.timestamp)) {
    const text = phpString(item.timestamp, 'DateTime::__construct(): Argument #1 ($datetime)');
    const parsed = parseActionTime(text);
    if (parsed === undefined) throw new Refusal(500, `Exception: Failed to parse time string (${text})`);
    at = parsed;
  }
  const action = phpString(item.action, 'strtolower(): Argument #1 ($string)').replace(/[A-Z]/g, (c) => c.toLowerCase());
  const { podcast: _p, episode: _e, action: _a, ...data } = item;
  // The `changed` column holds whole seconds.
  return { podcast, episode, action, at: Math.floor(at / 1000) * 1000, uploaded: now, data };
}

/**
 * `POST /api/2/episodes/{user}.json` (any device in the path) and both Nextcloud episode routes: one
 * transaction, so a bad item refuses everything (400, or 500 where opodsync crashes). Each action is a
 * new row; a feed with no subscription row gets one (subscribed), which then shows as an `add`.
 */
export function uploadOpodsyncEpisodes(account: Account, input: unknown, now: number): EpisodeUploadOutcome {
  if (!Array.isArray(input)) return { ok: false, status: 400, message: 'No valid array found' };
  let rows: ActionRecord[];
  try {
    rows = input.map((item) => row(item, now));
  } catch (err) {
    if (err instanceof Refusal) return { ok: false, status: err.status, message: err.message };
    throw err;
  }
  for (const r of rows) {
    if (!account.list.has(r.podcast)) account.list.set(r.podcast, true, now, true);
    account.episodes.log.append(r);
  }
  return { ok: true, result: { timestamp: Math.floor(now / 1000), update_urls: [] } };
}

/** `GET`: every row with `since <= time` (inclusive, on the action's time), unpaged; `timestamp` is now. */
export function pullOpodsyncEpisodes(account: Account, sinceText: string | null, now: number): WireEpisodeActions {
  const since = opodsyncSince(sinceText);
  const actions = account.episodes.log.records.filter((r) => Math.floor(r.at / 1000) >= since).map(opodsyncAction);
  // opodsync writes `timestamp` before `actions`.
  return { timestamp: Math.floor(now / 1000), actions };
}

/** A row as opodsync's `queryWithData` merges it: the uploaded fields first, then its columns. */
function opodsyncAction(r: ActionRecord): WireEpisodeActionOut {
  return { ...r.data, episode: r.episode, action: r.action, podcast: r.podcast, timestamp: opodsyncTime(r.at) };
}
