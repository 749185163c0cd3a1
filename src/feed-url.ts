// The one rule for a feed address, whoever supplies it: the app (engine/input.ts) or a server (each
// transport's wire validation). Anything else (`javascript:`, `data:`, `file:`…) would reach the page as a
// `feedUrl` a player may render as a link, so it is never stored.

/** The feed URL as stored (trimmed), or undefined when it is not an absolute http(s) URL. */
export function feedUrlOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  // Trimmed: servers and apps pad URLs, and a padded copy would be a second row (gPodder keys rows by URL).
  const trimmed = value.trim();
  try {
    const { protocol } = new URL(trimmed);
    return protocol === 'http:' || protocol === 'https:' ? trimmed : undefined;
  } catch {
    return undefined;
  }
}
