// Wire types of the Open Podcast API (snake_case) and their validation. Nothing here touches the store.
import { SyncError } from '../../src/errors.ts';
import { feedUrlOf } from '../feed-url.ts';
import { isGuid } from '../guid.ts';
import { parseTimestamp } from '../time.ts';

/** A subscription entry as `GET /subscriptions` lists it. */
export interface WireSubscription {
  feed_url: string;
  guid: string;
  is_subscribed: boolean;
  subscription_changed?: string;
  new_guid?: string;
  guid_changed?: string;
  deleted?: string;
}

/** A page of `GET /subscriptions`. */
export interface WirePage {
  total: number;
  page: number;
  per_page: number;
  next?: string;
  previous?: string;
  /** The entries the engine may store: feed URLs http(s) and trimmed, guids that can name a subscription. */
  subscriptions: WireSubscription[];
  /** Listed entries that break the feed-URL or guid rule: never stored, only counted as listed. */
  skipped: WireSkipped[];
}

/** A listed entry set apart by `parsePage`, without the feed URL that must not reach the store. */
export type WireSkipped = Omit<WireSubscription, 'feed_url'>;

/** Body of `PATCH /subscriptions/{guid}`. */
export interface WireUpdateRequest {
  new_feed_url?: string;
  new_guid?: string;
  is_subscribed?: boolean;
}

/** Response of `PATCH /subscriptions/{guid}`: only the fields that changed. */
export interface WireUpdateResult {
  new_feed_url?: string;
  is_subscribed?: boolean;
  subscription_changed?: string;
  new_guid?: string;
  guid_changed?: string;
}

/** Body of `POST /subscriptions`. */
export interface WireAddRequest {
  subscriptions: { feed_url: string; guid?: string }[];
}

/** Response of `POST /subscriptions`. */
export interface WireAddResult {
  success: { feed_url: string; guid: string; is_subscribed: boolean; subscription_changed?: string }[];
  failure: { feed_url: string; message: string }[];
}

/** Response of `DELETE /subscriptions/{guid}`. */
export interface WireDeletionAccepted {
  deletion_id: number;
  message?: string;
}

/** Response of `GET /deletions/{id}`. */
export interface WireDeletion {
  deletion_id: number;
  status: 'PENDING' | 'SUCCESS' | 'FAILURE';
  message?: string;
}


type Obj = Record<string, unknown>;

function bad(what: string, detail: string): SyncError {
  return new SyncError('bad-response', `${what}: ${detail}`);
}

function object(value: unknown, what: string): Obj {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw bad(what, 'not a JSON object');
  return value as Obj;
}

function str(o: Obj, key: string, what: string, required: boolean): string | undefined {
  const v = o[key];
  if (v === undefined || (v === null && !required)) {
    if (required) throw bad(what, `missing ${key}`);
    return undefined;
  }
  if (typeof v !== 'string' || v === '') throw bad(what, `${key} is not a non-empty string`);
  return v;
}

/**
 * A feed URL the server says it stored: under the app's own rule (trimmed http/https), else the answer is
 * bad. In an answer to one of our changes that keeps the change queued (nothing lost, the store as it was)
 * and a pull reconciles; a listing skips the entry instead (see `parsePage`).
 */
function feedUrl(o: Obj, key: string, what: string, required: boolean): string | undefined {
  const v = str(o, key, what, required);
  if (v === undefined) return undefined;
  const url = feedUrlOf(v);
  if (url === undefined) throw bad(what, `${key} is not an http(s) URL`);
  return url;
}

/** A guid that can go into a request path (not `.` or `..`), else the answer is bad. */
function guid(o: Obj, key: string, what: string, required: boolean): string | undefined {
  const v = str(o, key, what, required);
  if (v !== undefined && !isGuid(v)) throw bad(what, `${key} cannot name a subscription: ${JSON.stringify(v)}`);
  return v;
}

function time(o: Obj, key: string, what: string): string | undefined {
  const v = str(o, key, what, false);
  if (v !== undefined && parseTimestamp(v) === undefined) throw bad(what, `${key} is not a date-time: ${v}`);
  return v;
}

function bool(o: Obj, key: string, what: string, required: boolean): boolean | undefined {
  const v = o[key];
  if (v === undefined || (v === null && !required)) {
    if (required) throw bad(what, `missing ${key}`);
    return undefined;
  }
  if (typeof v !== 'boolean') throw bad(what, `${key} is not a boolean`);
  return v;
}

function int(o: Obj, key: string, what: string): number {
  const v = o[key];
  // A safe integer: 1e300 is "whole" too, and a deletion id beyond 2^53 would come back as another number.
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw bad(what, `${key} is not a whole number`);
  return v;
}

/** A field check: the value at `key` of `o` validated (undefined when absent and not required). */
type Check = (o: Obj, key: string, what: string, required: boolean) => unknown;

/**
 * The fields of `o` that `shape` names, each validated by its check in the order given (`true` after it:
 * required); those absent are left out.
 */
function fields<T>(o: Obj, what: string, shape: Record<string, [Check, boolean?]>): T {
  const out: Obj = {};
  for (const [key, [check, required = false]] of Object.entries(shape)) {
    const v = check(o, key, what, required);
    if (v !== undefined) out[key] = v;
  }
  return out as T;
}

/** Validate one listed subscription entry's shape (`parsePage` then sorts out entries that break the rules). */
export function parseSubscription(value: unknown): WireSubscription {
  const what = 'subscription entry';
  return fields(object(value, what), what, {
    feed_url: [str, true],
    guid: [str, true],
    is_subscribed: [bool, true],
    subscription_changed: [time],
    new_guid: [str],
    guid_changed: [time],
    deleted: [time],
  });
}

/** Validate a list page; `maxEntries` is the page size asked for (a bigger page is refused). */
export function parsePage(value: unknown, maxEntries: number): WirePage {
  const what = 'subscription page';
  const o = object(value, what);
  const list = o.subscriptions;
  if (!Array.isArray(list)) throw bad(what, 'subscriptions is not an array');
  if (list.length > maxEntries) throw bad(what, `${list.length} entries where at most ${maxEntries} were asked`);
  const page: WirePage = {
    ...fields<Pick<WirePage, 'total' | 'page' | 'per_page'>>(o, what, { total: [int], page: [int], per_page: [int] }),
    subscriptions: [],
    skipped: [],
  };
  // An entry with a script URL or a dot-segment guid is skipped, not the page refused: it stays on the server,
  // so a refused page would stop every later pull there (and every other device's change behind it).
  for (const item of list) {
    const entry = parseSubscription(item);
    const url = feedUrlOf(entry.feed_url);
    if (url !== undefined && isGuid(entry.guid) && (entry.new_guid === undefined || isGuid(entry.new_guid))) {
      page.subscriptions.push({ ...entry, feed_url: url });
    } else {
      const { feed_url: _dropped, ...rest } = entry;
      page.skipped.push(rest);
    }
  }
  return Object.assign(page, fields(o, what, { next: [str], previous: [str] }));
}

/** Validate a PATCH response (no body, a 204, is valid: applied, nothing more changed). */
export function parseUpdateResult(value: unknown): WireUpdateResult {
  const what = 'update result';
  if (value === undefined) return {};
  return fields(object(value, what), what, {
    new_feed_url: [feedUrl],
    is_subscribed: [bool],
    subscription_changed: [time],
    new_guid: [guid],
    guid_changed: [time],
  });
}

/** Validate a POST response. */
export function parseAddResult(value: unknown): WireAddResult {
  const what = 'add result';
  const o = object(value, what);
  const success = o.success ?? [];
  const failure = o.failure ?? [];
  if (!Array.isArray(success) || !Array.isArray(failure)) throw bad(what, 'success/failure are not arrays');
  return {
    success: success.map((item) => {
      const entry = fields<WireAddResult['success'][number]>(object(item, what), what, {
        feed_url: [feedUrl, true],
        guid: [guid, true],
        is_subscribed: [bool],
        subscription_changed: [time],
      });
      entry.is_subscribed ??= true;
      return entry;
    }),
    failure: failure.map((item) => {
      const e = object(item, what);
      return { feed_url: str(e, 'feed_url', what, false) ?? '', message: str(e, 'message', what, false) ?? 'refused' };
    }),
  };
}

/** Validate a DELETE response. */
export function parseDeletionAccepted(value: unknown): WireDeletionAccepted {
  const what = 'deletion response';
  return fields(object(value, what), what, { deletion_id: [int], message: [str] });
}

/** A deletion job's status: one of the three the API names. */
function status(o: Obj, key: string, what: string): WireDeletion['status'] {
  const v = o[key];
  if (v !== 'PENDING' && v !== 'SUCCESS' && v !== 'FAILURE') throw bad(what, `unknown status ${String(v)}`);
  return v;
}

/** Validate a deletion status. */
export function parseDeletion(value: unknown): WireDeletion {
  const what = 'deletion status';
  return fields(object(value, what), what, { status: [status], deletion_id: [int], message: [str] });
}
