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

/** Episodes indexed for matching: `find` is the rule, `put` replaces a row (found again as it is now). */
export interface EpisodeIndex<T extends EpisodeIdentity> {
  find(ref: { podcast: string; media: string; guid?: string }): T | undefined;
  put(row: T, replaces?: T): void;
}

/**
 * Index `rows`: an incoming ref is the row with its guid when it has one (and a row carries it), else the row
 * with its media key that has no other guid (two episodes may share an enclosure URL: NC #78).
 */
export function episodeIndex<T extends EpisodeIdentity>(rows: readonly T[]): EpisodeIndex<T> {
  const key = (podcast: string, value: string) => `${podcast}\n${value}`;
  const byGuid = new Map<string, T>();
  const byMedia = new Map<string, T[]>();
  const add = (row: T) => {
    if (row.guid !== undefined) byGuid.set(key(row.podcast, row.guid), row);
    const k = key(row.podcast, row.media);
    byMedia.set(k, [...(byMedia.get(k) ?? []), row]);
  };
  rows.forEach(add);
  return {
    find(ref) {
      const own = ref.guid === undefined ? undefined : byGuid.get(key(ref.podcast, ref.guid));
      return own ?? byMedia.get(key(ref.podcast, ref.media))?.find((c) => ref.guid === undefined || c.guid === undefined);
    },
    put(row, replaces) {
      if (replaces) {
        if (replaces.guid !== undefined && byGuid.get(key(replaces.podcast, replaces.guid)) === replaces) byGuid.delete(key(replaces.podcast, replaces.guid));
        const k = key(replaces.podcast, replaces.media);
        byMedia.set(k, (byMedia.get(k) ?? []).filter((r) => r !== replaces));
      }
      add(row);
    },
  };
}

/** The candidate an incoming ref is (see `episodeIndex`). */
export function matchEpisode<T extends EpisodeIdentity>(ref: { podcast: string; media: string; guid?: string }, candidates: readonly T[]): T | undefined {
  return episodeIndex(candidates).find(ref);
}
