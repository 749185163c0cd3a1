// How each server reads the `since` query parameter (seconds).

/** A parsed `since`, or the 400 message that refuses it. */
export type SinceResult = { ok: true; seconds: number } | { ok: false; message: string };

const WEEK = 7 * 24 * 3600;

/** mygpo: required, a whole number as Python's int() reads it (sign, surrounding spaces), not negative. */
export function mygpoSince(text: string | null): SinceResult {
  if (text === null) return { ok: false, message: "parameter 'since' missing" };
  if (!/^\s*[+-]?\d+\s*$/.test(text)) return { ok: false, message: "'since' is not a valid timestamp" };
  const seconds = Number(text.trim());
  return seconds < 0 ? { ok: false, message: "'since' must be a non-negative number" } : { ok: true, seconds };
}

/** PHP's (int) cast of a string: its leading number (exponent included) truncated, 0 when there is none. */
export function phpInt(text: string): number {
  const m = /^[ \t\n\r\v\f]*([+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?)/.exec(text);
  const n = m ? Math.trunc(Number(m[1])) : 0;
  return Number.isFinite(n) ? n : 0;
}

/** opodsync: optional, any text cast to an integer (so "abc" is 0). */
export function opodsyncSince(text: string | null): number {
  return text === null ? 0 : phpInt(text);
}

/** The Nextcloud app: cast like PHP; absent means one week before `nowSeconds`. */
export function nextcloudSince(text: string | null, nowSeconds: number): number {
  return text === null ? nowSeconds - WEEK : phpInt(text);
}
