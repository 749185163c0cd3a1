// Which episode a ref names: the one rule for the page's store and the engine. Within one podcast, by RSS guid
// first, then by enclosure URL without its query string (hosts rotate media URLs; tracking queries change on
// every feed refresh).

/** What tells an episode apart within its podcast. */
export interface EpisodeKey {
  episode: string;
  guid?: string | undefined;
}

/** The enclosure URL as matched: no query, no fragment. */
export const mediaKey = (url: string): string => url.trim().split(/[?#]/)[0]!;

/**
 * The row of `rows` (one podcast's episodes) that `ref` names: the one with its guid when it has one (and a row
 * carries it), else one with its enclosure URL that has no other guid (two episodes may share one: NC #78).
 */
export function matchEpisode<T extends EpisodeKey>(ref: EpisodeKey, rows: readonly T[]): T | undefined {
  const media = mediaKey(ref.episode);
  return rows.find((row) => ref.guid !== undefined && row.guid === ref.guid) ?? rows.find((row) => mediaKey(row.episode) === media && (ref.guid === undefined || row.guid === undefined));
}
