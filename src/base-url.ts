// Apart from the schema, so a page (its last copy, an app naming its database) does not pull Dexie in.

/** The base URL without a trailing slash, query or fragment. */
export function normaliseBaseUrl(baseUrl: string): string {
  const url = new URL(baseUrl);
  url.hash = '';
  url.search = '';
  return url.href.replace(/\/+$/, '');
}

/** What every request's path is resolved against: the normalised base URL as a directory. */
export function requestBase(baseUrl: string): URL {
  return new URL(normaliseBaseUrl(baseUrl) + '/');
}

/** The default database name for a server: two servers never share a store. */
export function defaultDbName(baseUrl: string): string {
  return `opa-sync:${normaliseBaseUrl(baseUrl)}`;
}
