// Episode action timestamps: the ISO 8601 forms clients send, read as every server reads them (naive
// means UTC), and written out in each server's own format.

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/**
 * A timestamp's time in ms since the epoch (fractions kept to the ms), or undefined when it is not
 * an ISO 8601 date or date-time. Naive means UTC (mygpo stores it as sent, in UTC; opodsync and the
 * Nextcloud app read it with a UTC zone); an offset is honoured. The servers' own parsers (PHP's
 * DateTime, Python's dateutil) read more free-form text than this; clients send ISO.
 */
export function parseActionTime(text: string): number | undefined {
  const m = ISO.exec(text.trim());
  if (!m) return undefined;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone] = m;
  const ms = Number(`0.${frac || '0'}`) * 1000;
  const local = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), Math.floor(ms));
  // Date.UTC rolls 2024-02-31 over into March: a date that does not round-trip is no date.
  const check = new Date(local);
  if (check.getUTCDate() !== Number(d) || check.getUTCMonth() !== Number(mo) - 1 || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) {
    return undefined;
  }
  // Years below 100 would be read as 19xx by Date.UTC; the clients never send them.
  if (Number(y) < 100) return undefined;
  let offset = 0;
  if (zone && zone.toUpperCase() !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    offset = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || '0')) * 60_000;
  }
  return local - offset;
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** `YYYY-MM-DDTHH:MM:SS` in UTC. */
export function naiveUtc(ms: number): string {
  const d = new Date(ms);
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/** mygpo: Python's `isoformat()` of a naive UTC datetime: microseconds only when not 0. */
export function mygpoTime(ms: number): string {
  const frac = ((ms % 1000) + 1000) % 1000;
  return frac === 0 ? naiveUtc(ms) : `${naiveUtc(ms)}.${pad(frac, 3)}000`;
}

/** The Nextcloud app: PHP's `format('c')` in UTC. */
export const nextcloudTime = (ms: number): string => `${naiveUtc(ms)}+00:00`;

/** opodsync: SQLite's `strftime('%Y-%m-%dT%H:%M:%SZ', …)`. */
export const opodsyncTime = (ms: number): string => `${naiveUtc(ms)}Z`;
