// Episode actions as gpodder.net (mygpo) keeps them: a log per user, an exact repeat dropped, URLs
// sanitised, pulls of at most 1,000 actions whose `timestamp` is the last one's time.
import { DEVICE_ID, registerDevice, type Account } from './accounts.ts';
import { catalogGuid } from './catalog.ts';
import type { ActionRecord } from './episode-store.ts';
import { sanitizeFeedUrl } from './sanitize.ts';
import { mygpoTime, parseActionTime } from './stamp.ts';
import type { WireEpisodeActionOut, WireEpisodeActions, WireEpisodeUploadResult } from './types.ts';
import { isObject } from '../validate.ts';

/** mygpo's `EPISODE_ACTION_TYPES`. */
const TYPES = new Set(['download', 'delete', 'play', 'new', 'flattr']);
/** mygpo's `MAX_EPISODE_ACTIONS`: the most actions one pull answers. */
export const MYGPO_MAX_ACTIONS = 1000;
/** mygpo's `API_ACTIONS_MAX_NONBG`: larger uploads are handed to a background task. */
export const MYGPO_MAX_FOREGROUND = 100;

/** An upload's answer, or how the server fails it (400 is a Django `HttpResponseBadRequest`, 500 a crash). */
export type EpisodeUploadOutcome = { ok: true; result: WireEpisodeUploadResult } | { ok: false; status: 400 | 500; message: string };

class Crash extends Error {
  constructor(readonly status: 400 | 500, message: string) {
    super(message);
  }
}

/** Django's `IntegerField` reading a value: None stays None, numbers and digit strings become ints, anything else crashes. */
function integer(value: unknown, key: string): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number' && Number.isFinite(value)) return Math.trunc(value);
  if (typeof value === 'string' && /^\s*[+-]?\d+\s*$/.test(value)) return Number(value.trim());
  throw new Crash(500, `Field '${key}' expected a number but got ${JSON.stringify(value)}.`);
}

/** mygpo's `sanitize_append`: the URL as stored ("" when refused), and a rewrite noted in `updates`. */
function sanitized(value: unknown, updates: [string, string][]): string {
  if (value === undefined || value === null || value === '') return '';
  if (typeof value !== 'string') throw new Crash(500, `'${typeof value}' object has no attribute 'strip'`);
  const clean = sanitizeFeedUrl(value);
  if (clean !== value) updates.push([value, clean]);
  return clean;
}

/** What mygpo compares to drop a repeat: (episode, device, action, started, position), whatever the time. */
export const repeatKey = (r: ActionRecord): string =>
  JSON.stringify([r.podcast, r.episode, r.device ?? null, r.action, r.started ?? null, r.position ?? null]);

/** Store one action as `update_episodes` does; throws Crash where mygpo fails. */
function storeOne(account: Account, item: unknown, now: number, updates: [string, string][]): void {
  if (!isObject(item)) throw new Crash(500, `'${Array.isArray(item) ? 'list' : typeof item}' object has no attribute 'get'`);
  const podcast = sanitized(item.podcast, updates);
  if (!podcast) return;
  const episode = sanitized(item.episode, updates);
  if (!episode) return;
  const action = item.action;
  if (typeof action !== 'string' || !TYPES.has(action)) throw new Crash(500, `invalid action ${String(action)}`);
  let device: string | undefined;
  if (item.device !== undefined && item.device !== null && item.device !== '' && item.device !== false) {
    if (typeof item.device !== 'string' || !DEVICE_ID.test(item.device)) throw new Crash(400, `Invalid device ID: ${String(item.device)}`);
    device = registerDevice(account, item.device).id;
  }
  let at = now;
  if (item.timestamp !== undefined && item.timestamp !== null && item.timestamp !== '' && item.timestamp !== false && item.timestamp !== 0) {
    const parsed = typeof item.timestamp === 'string' ? parseActionTime(item.timestamp) : undefined;
    if (parsed === undefined) throw new Crash(500, `Unknown string format: ${String(item.timestamp)}`);
    at = parsed;
  }
  const record: ActionRecord = {
    podcast,
    episode,
    action,
    at,
    uploaded: now,
    started: integer(item.started, 'started'),
    position: integer(item.position, 'position'),
    total: integer(item.total, 'total'),
  };
  if (device !== undefined) record.device = device;
  account.episodes.log.append(record, repeatKey(record));
}

/**
 * `POST /api/2/episodes/{user}.json`. Actions are stored one by one (no transaction): a bad one fails
 * the request with the ones before it kept. An action whose podcast or episode URL sanitises to
 * nothing is skipped (reported in `update_urls`). Over 100 actions go to mygpo's background task:
 * the answer comes at once with `update_urls: []`, and a bad action stops the task silently.
 */
export function uploadMygpoEpisodes(account: Account, input: unknown, now: number): EpisodeUploadOutcome {
  const timestamp = Math.floor(now / 1000);
  if (!Array.isArray(input)) return { ok: false, status: 500, message: `'${typeof input}' object is not iterable as actions` };
  const updates: [string, string][] = [];
  const background = input.length > MYGPO_MAX_FOREGROUND;
  try {
    for (const item of input) storeOne(account, item, now, updates);
  } catch (err) {
    if (!(err instanceof Crash)) throw err;
    if (!background) return { ok: false, status: err.status, message: err.message };
  }
  return { ok: true, result: { timestamp, update_urls: background ? [] : updates } };
}

/** A pull's query as mygpo reads it. */
export interface MygpoPullQuery {
  since: string | null;
  podcast: string | null;
  device: string | null;
  aggregated: string | null;
}

/** mygpo's `parse_bool`. */
const truthy = (text: string | null): boolean => text !== null && ['true', '1', 'yes', 'on'].includes(text.trim().toLowerCase());

/**
 * `GET /api/2/episodes/{user}.json`: actions with `since <= time < now` (inclusive `since`, on the
 * action's own time), oldest first, at most 1,000; `timestamp` is the last one's second, or now when
 * none. `podcast` must be a podcast the server knows and `device` one of the user's (404 otherwise).
 * `aggregated` keeps the last action per episode URL of the page, any type.
 */
export function pullMygpoEpisodes(
  account: Account,
  query: MygpoPullQuery,
  now: number,
  knownPodcast: (url: string) => boolean,
): { ok: true; body: WireEpisodeActions } | { ok: false; status: 400 | 404; message: string } {
  let since: number | undefined;
  if (query.since) {
    if (!/^\s*[+-]?\d+(_\d+)*\s*$/.test(query.since)) return { ok: false, status: 400, message: 'since-value is not a valid timestamp' };
    since = Number(query.since.trim().replace(/_/g, '')) * 1000;
    if (!Number.isSafeInteger(since) || since > 253402300799000) return { ok: false, status: 400, message: 'since-value is not a valid timestamp' };
  }
  if (query.podcast && !knownPodcast(query.podcast)) return { ok: false, status: 404, message: 'Not Found' };
  if (query.device && !account.devices.has(query.device)) return { ok: false, status: 404, message: 'Client matching query does not exist.' };
  const matching = account.episodes.log.records.filter(
    (r) =>
      r.at < now &&
      (since === undefined || r.at >= since) &&
      (!query.podcast || r.podcast === query.podcast) &&
      (!query.device || r.device === query.device),
  );
  // Oldest first; a stable sort keeps upload order between equal times.
  const page = matching.sort((a, b) => a.at - b.at).slice(0, MYGPO_MAX_ACTIONS);
  let actions = page.map(mygpoAction);
  if (truthy(query.aggregated)) actions = [...new Map(actions.map((a) => [a.episode, a])).values()];
  const timestamp = Math.floor((page.length > 0 ? page[page.length - 1].at : now) / 1000);
  return { ok: true, body: { actions, timestamp } };
}

/** One action as mygpo's `episode_action_json` writes it (plus the feed's guid, mygpo PR #621). */
function mygpoAction(r: ActionRecord): WireEpisodeActionOut {
  const out: WireEpisodeActionOut = {
    podcast: r.podcast,
    episode: r.episode,
    guid: catalogGuid(r.podcast, r.episode),
    action: r.action,
    timestamp: mygpoTime(r.at),
  };
  if (r.device !== undefined) out.device = r.device;
  if (r.action === 'play') {
    out.started = r.started ?? null;
    out.position = r.position ?? null;
    out.total = r.total ?? null;
  }
  return out;
}
