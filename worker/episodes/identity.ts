// Which stored episode an action is about: within one podcast, by RSS guid first, then by enclosure URL without
// its query string (hosts rotate media URLs; tracking queries change on every feed refresh).

/** The enclosure URL as matched: no query, no fragment (the URL itself when it does not parse). */
export function mediaKey(url: string): string {
  const trimmed = url.trim();
  const cut = trimmed.search(/[?#]/);
  return cut === -1 ? trimmed : trimmed.slice(0, cut);
}

/** The identity fields of a stored episode. */
export interface EpisodeIdentity {
  podcast: string;
  media: string;
  guid?: string;
}

/**
 * The candidate an incoming ref is: the one with its guid when it has one (and a candidate carries it), else
 * the one with its media key that has no other guid (two episodes may share an enclosure URL: NC #78).
 */
export function matchEpisode<T extends EpisodeIdentity>(ref: { podcast: string; media: string; guid?: string }, candidates: readonly T[]): T | undefined {
  const own = candidates.filter((c) => c.podcast === ref.podcast);
  if (ref.guid !== undefined) {
    const byGuid = own.find((c) => c.guid === ref.guid);
    if (byGuid) return byGuid;
  }
  return own.find((c) => c.media === ref.media && (ref.guid === undefined || c.guid === undefined));
}
