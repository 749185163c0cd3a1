// Apart from the schema so the page (its last copy) resolves requests without pulling Dexie in.

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
