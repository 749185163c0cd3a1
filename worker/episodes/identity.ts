// Stored episodes indexed for matching an incoming ref by the identity rule (src/episode-identity.ts, the page's
// store uses it too): the index only narrows the rows the rule looks at.
import { matchEpisode, mediaKey, type EpisodeKey } from '../../src/episode-identity.ts';

export { mediaKey };

/** The identity fields of a stored episode (`media`: its enclosure URL's `mediaKey`, kept to index it). */
export interface EpisodeIdentity extends EpisodeKey {
  podcast: string;
  media: string;
}

/** An incoming ref: an episode of a podcast. */
type Ref = EpisodeKey & { podcast: string };

/** Episodes indexed for matching: `find` is the rule, `put` replaces a row (found again as it is now). */
export interface EpisodeIndex<T extends EpisodeIdentity> {
  find(ref: Ref): T | undefined;
  put(row: T, replaces?: T): void;
}

/** Index `rows` by podcast and guid, and by podcast and media key. */
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
      return matchEpisode(ref, [...(own ? [own] : []), ...(byMedia.get(key(ref.podcast, mediaKey(ref.episode))) ?? [])]);
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
