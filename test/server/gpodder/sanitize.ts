// mygpo's feed URL sanitising (`normalize_feed_url`), written from its documented behaviour: what a
// client sees come back in `update_urls`. Left out: mygpo's shortcut prefixes (`fb:`, `yt:`, ...).

const KEPT_SCHEMES = new Set(['http', 'https', 'ftp', 'file']);
const AS_HTTP = new Set(['feed', 'itpc', 'itms']);
const SPLIT = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/is;

/** Percent-encode every UTF-8 byte of `c`, upper-case hex as Python's quote does. */
const escape = (c: string): string =>
  Array.from(new TextEncoder().encode(c), (b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');

/** Python's `quote(path, '/%')`: letters, digits, `_.-~`, `/` and `%` stay. */
const quotePath = (path: string): string => path.replace(/[^A-Za-z0-9_.~\-/%]/gu, escape);

/** Python's `quote_plus(query, ':&=')`: a space becomes `+`; `%` and `+` are escaped too. */
const quoteQuery = (query: string): string => query.replace(/[^A-Za-z0-9_.~\-:&= ]/gu, escape).replace(/ /g, '+');

/** The URL mygpo stores for `raw`, or "" when it refuses it. */
export function sanitizeFeedUrl(raw: string): string {
  const trimmed = raw.trim();
  if (trimmed.length < 8) return '';
  const m = SPLIT.exec(trimmed.includes('://') ? trimmed : `http://${trimmed}`);
  if (!m) return '';
  let scheme = m[1].toLowerCase();
  // Schemes and hosts are case-insensitive; user info goes, for the user's privacy.
  const host = m[2].toLowerCase().split('@').pop()!;
  const path = quotePath(m[3]) || '/';
  const query = quoteQuery(m[4] ?? '');
  const fragment = m[5] ?? '';
  if (AS_HTTP.has(scheme)) scheme = 'http';
  if (!KEPT_SCHEMES.has(scheme)) return '';
  // An empty query or fragment is dropped, as Python's urlunsplit does.
  return `${scheme}://${host}${path}${query ? `?${query}` : ''}${fragment ? `#${fragment}` : ''}`;
}
