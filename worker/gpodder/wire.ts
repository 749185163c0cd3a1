// gPodder v2 / Nextcloud gPodder Sync wire shapes, validated before anything touches the store.
import { SyncError } from '../../src/errors.ts';
import { feedUrlOf } from '../feed-url.ts';

/** Answer of a subscription pull: what changed since `since`, and the server's clock (seconds). */
export interface WireChanges {
  add: string[];
  remove: string[];
  timestamp: number;
  /** Pairs [as sent, as stored]; "" as stored means refused. Some servers add it to pulls too. */
  update_urls: [string, string][];
}

/** Answer of an upload: the server's clock (seconds) and its URL rewrites (Nextcloud sends none). */
export interface WireUploaded {
  timestamp: number;
  update_urls: [string, string][];
  /** URLs sent that the answer rewrote to something the feed-URL rule refuses: no answer for them. */
  unreadable: string[];
}

/** Body of an upload. */
export interface WireUpload {
  add: string[];
  remove: string[];
}

const bad = (what: string, detail: string) => new SyncError('bad-response', `${what}: ${detail}`);

function record(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw bad(what, 'not a JSON object');
  return value as Record<string, unknown>;
}

function urls(value: unknown, key: string, what: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((u) => typeof u !== 'string')) throw bad(what, `${key} is not a list of URLs`);
  // Under the app's own rule (trimmed http/https). A URL it refuses is skipped, not the answer refused: it
  // stays on the server, so every later pull would stop there.
  return (value as string[]).flatMap((u) => feedUrlOf(u) ?? []);
}

/**
 * The latest server time believed: 9999-12-31T23:59:59Z in seconds. A clock beyond it is no clock (1e300 would
 * make a RangeError of every date built from it) and does not fit the four-digit years of the store's stamps.
 */
export const MAX_TIMESTAMP = 253_402_300_799;

function seconds(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw bad(what, 'timestamp is not a number of seconds');
  if (value > MAX_TIMESTAMP) throw bad(what, `timestamp ${value} is after the year 9999`);
  return Math.floor(value);
}

/**
 * Rewrites under the feed-URL rule: one from a URL never stored names nothing (dropped); one to a URL the rule
 * refuses (a script URL) is no answer at all for the URL sent: listed apart as `unreadable` (an upload's change
 * for it stays queued, as after any unreadable answer; a pull ignores it). "" still means refused.
 */
function rewrites(value: unknown, what: string): { pairs: [string, string][]; unreadable: string[] } {
  const out = { pairs: [] as [string, string][], unreadable: [] as string[] };
  if (value === undefined || value === null) return out;
  const ok = Array.isArray(value) && value.every((p) => Array.isArray(p) && p.length === 2 && typeof p[0] === 'string' && typeof p[1] === 'string');
  if (!ok) throw bad(what, 'update_urls is not a list of [old, new] pairs');
  for (const [from, to] of value as [string, string][]) {
    const old = feedUrlOf(from);
    if (old === undefined) continue;
    const next = to === '' ? '' : feedUrlOf(to);
    if (next === undefined) out.unreadable.push(old);
    else out.pairs.push([old, next]);
  }
  return out;
}

/**
 * Most URLs one pull answer may name (`add`, `remove` and `update_urls` together). Large accounts hold a few
 * thousand feeds, and opodsync's full answer also lists every URL ever removed; 100,000 leaves a wide margin
 * while bounding what one answer costs (about 10 MB of URLs, 200 store batches). Beyond it: `bad-response`.
 */
export const MAX_ANSWER_URLS = 100_000;

/** Validate a pull answer. */
export function parseChanges(value: unknown): WireChanges {
  const what = 'subscription changes';
  const o = record(value, what);
  const changes = { add: urls(o.add, 'add', what), remove: urls(o.remove, 'remove', what), timestamp: seconds(o.timestamp, what), update_urls: rewrites(o.update_urls, what).pairs };
  const named = changes.add.length + changes.remove.length + changes.update_urls.length;
  if (named > MAX_ANSWER_URLS) throw bad(what, `${named} URLs in one answer (at most ${MAX_ANSWER_URLS})`);
  return changes;
}

/** Validate an upload answer. */
export function parseUploaded(value: unknown): WireUploaded {
  const what = 'upload answer';
  const o = record(value, what);
  const { pairs, unreadable } = rewrites(o.update_urls, what);
  return { timestamp: seconds(o.timestamp, what), update_urls: pairs, unreadable };
}
