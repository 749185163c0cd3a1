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

/** Where a ref's candidates are kept: under its podcast and guid (first), and its podcast and media key. */
const keys = ({ podcast, guid, episode }: Ref) => [...(guid === undefined ? [] : [`${podcast}\ng:${guid}`]), `${podcast}\nm:${mediaKey(episode)}`];

/** Index `rows` by their keys. */
export function episodeIndex<T extends EpisodeIdentity>(rows: readonly T[]): EpisodeIndex<T> {
  const byKey = new Map<string, T[]>();
  const index: EpisodeIndex<T> = {
    find: (ref) => matchEpisode(ref, keys(ref).flatMap((k) => byKey.get(k) ?? [])),
    put(row, replaces) {
      if (replaces) for (const k of keys(replaces)) byKey.set(k, byKey.get(k)!.filter((r) => r !== replaces));
      for (const k of keys(row)) byKey.set(k, [...(byKey.get(k) ?? []), row]);
    },
  };
  for (const row of rows) index.put(row);
  return index;
}
