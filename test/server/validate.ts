import type { WireNewFeed, WirePatchRequest } from './types.ts';

// Parsers for the values clients send; each returns undefined (or a reason) instead of throwing.

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Parse an RFC 3339 date-time (an offset is required) to ms since epoch; undefined when invalid. */
export function parseDateTime(text: string): number | undefined {
  const m = DATE_TIME.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s] = m.map(Number);
  // Date.parse rolls 2022-02-30 over to March: check the calendar fields by hand.
  const day = new Date(Date.UTC(y, mo - 1, d));
  if (day.getUTCMonth() !== mo - 1 || day.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) return undefined;
  const ms = Date.parse(text.toUpperCase());
  // Sub-millisecond digits are cut, which keeps "strictly greater" exact for ms timestamps.
  return Number.isFinite(ms) ? ms : undefined;
}

/** Parse a page number or page size: decimal digits only, at least 1. */
export function parsePositiveInt(text: string): number | undefined {
  if (!/^\d{1,15}$/.test(text)) return undefined;
  const n = Number(text);
  return n >= 1 ? n : undefined;
}

/** Why a feed URL is refused (http and https only), or undefined when it is fine. */
export function feedUrlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? 'Invalid URL' : 'No protocol present';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'Unsupported protocol';
  return url.hostname ? undefined : 'Invalid URL';
}

/** A plain JSON object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Validate a PATCH body: at least one known field, each of the right type; undefined when invalid. */
export function parsePatchBody(value: unknown): WirePatchRequest | undefined {
  if (!isObject(value)) return undefined;
  const { new_feed_url, new_guid, is_subscribed } = value;
  const out: WirePatchRequest = {};
  if (new_feed_url !== undefined) {
    if (typeof new_feed_url !== 'string' || feedUrlProblem(new_feed_url)) return undefined;
    out.new_feed_url = new_feed_url;
  }
  if (new_guid !== undefined) {
    if (typeof new_guid !== 'string' || new_guid === '') return undefined;
    out.new_guid = new_guid;
  }
  if (is_subscribed !== undefined) {
    if (typeof is_subscribed !== 'boolean') return undefined;
    out.is_subscribed = is_subscribed;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Validate a POST body's shape (feed URLs are judged per item later); undefined when malformed. */
export function parsePostBody(value: unknown): WireNewFeed[] | undefined {
  if (!isObject(value) || !Array.isArray(value.subscriptions)) return undefined;
  const out: WireNewFeed[] = [];
  for (const item of value.subscriptions) {
    if (!isObject(item) || typeof item.feed_url !== 'string') return undefined;
    if (item.guid === undefined) out.push({ feed_url: item.feed_url });
    else if (typeof item.guid === 'string' && item.guid !== '') out.push({ feed_url: item.feed_url, guid: item.guid });
    else return undefined;
  }
  return out;
}
