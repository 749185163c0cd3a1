// Episode actions as the Nextcloud gPodder Sync app (3.15.2) keeps them: plays only, one row per episode
// (found by guid, else URL), overwritten by every upload whatever its time; strict `since`; `PLAY` out.
import type { Account } from './accounts.ts';
import type { ActionRecord } from './episode-store.ts';
import type { EpisodeUploadOutcome } from './episodes-mygpo.ts';
import { phpInt } from './since.ts';
import { nextcloudTime, parseActionTime } from './stamp.ts';
import type { WireEpisodeActionOut, WireEpisodeActions } from './types.ts';
import { isObject } from '../validate.ts';

/** The app's URL columns: longer values make the database fail the request (NC #81, #144). */
const COLUMN = 500;
const REQUIRED = ['podcast', 'episode', 'action', 'timestamp'] as const;

class Crash extends Error {}

/** The items Nextcloud's `getParams()` yields for a JSON body: its numerically keyed members. */
function items(input: unknown): unknown[] {
  if (Array.isArray(input)) return input;
  if (isObject(input)) return Object.entries(input).filter(([k]) => /^\s*-?\d+(\.\d+)?\s*$/.test(k)).map(([, v]) => v);
  return [];
}

/** An `int` constructor argument under `strict_types`: absent or null is -1, anything but an integer a TypeError. */
function int(value: unknown, key: string): number {
  if (value === undefined || value === null) return -1;
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  throw new Crash(`TypeError: EpisodeAction::__construct(): Argument ($${key}) must be of type int`);
}

/** A `string` argument under `strict_types`. */
function str(value: unknown, key: string): string {
  if (typeof value !== 'string') throw new Crash(`TypeError: EpisodeAction::__construct(): Argument ($${key}) must be of type string`);
  return value;
}

/** `EpisodeActionReader::fromArray`: every play checked before anything is saved. */
function read(play: Record<string, unknown>, now: number): ActionRecord & { stamp: string } {
  if (!REQUIRED.every((k) => k in play)) throw new Crash(`Client sent incomplete or invalid data: ${JSON.stringify(play)}`);
  const guid = play.guid === undefined || play.guid === null ? null : str(play.guid, 'guid');
  return {
    podcast: str(play.podcast, 'podcast'),
    episode: str(play.episode, 'episode'),
    action: str(play.action, 'action').toUpperCase(),
    stamp: str(play.timestamp, 'timestamp'),
    at: 0,
    uploaded: now,
    guid,
    started: int(play.started, 'started'),
    position: int(play.position, 'position'),
    total: int(play.total, 'total'),
  };
}

/**
 * `POST episode_action/create`: anything but `play` (any case) is dropped unseen (3.13.3); a play
 * missing a required key or of the wrong type fails the request before anything is saved; then each
 * is saved in turn, and a bad timestamp, an over-long URL or a guid/URL clash fails the request with
 * the ones before it kept. A body that is not a list stores nothing and still answers 200.
 */
export function uploadNextcloudEpisodes(account: Account, input: unknown, now: number): EpisodeUploadOutcome {
  const plays = items(input).filter(
    (i): i is Record<string, unknown> => isObject(i) && typeof i.action === 'string' && i.action.toLowerCase() === 'play',
  );
  try {
    const parsed = plays.map((p) => read(p, now));
    for (const { stamp, ...record } of parsed) {
      const at = parseActionTime(stamp);
      if (at === undefined) throw new Crash(`Exception: DateTime::__construct(): Failed to parse time string (${stamp})`);
      if (record.podcast.length > COLUMN || record.episode.length > COLUMN || (record.guid?.length ?? 0) > COLUMN) {
        throw new Crash('Doctrine\\DBAL\\Exception: value too long for the column');
      }
      if (account.episodes.rows.save({ ...record, at: Math.floor(at / 1000) * 1000 }) === 'conflict') {
        throw new Crash('Error: Call to a member function getId() on null');
      }
    }
  } catch (err) {
    if (err instanceof Crash) return { ok: false, status: 500, message: err.message };
    throw err;
  }
  return { ok: true, result: { timestamp: Math.floor(now / 1000) } };
}

/** `GET episode_action?since=`: the rows whose action time is after `since` (strict; PHP int, 0 when absent). */
export function pullNextcloudEpisodes(account: Account, sinceText: string | null, now: number): WireEpisodeActions {
  const since = sinceText === null ? 0 : phpInt(sinceText);
  const actions = account.episodes.rows.records.filter((r) => Math.floor(r.at / 1000) > since).map(nextcloudAction);
  return { actions, timestamp: Math.floor(now / 1000) };
}

/** A row as the app's `toArray()` writes it. */
function nextcloudAction(r: ActionRecord): WireEpisodeActionOut {
  return {
    podcast: r.podcast,
    episode: r.episode,
    guid: r.guid ?? null,
    action: r.action,
    timestamp: nextcloudTime(r.at),
    started: r.started ?? -1,
    position: r.position ?? -1,
    total: r.total ?? -1,
  };
}
