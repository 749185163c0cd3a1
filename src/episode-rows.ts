// A podcast store's episodes after a change: the few episodes the change named are read alone (one
// `episode(ref)` each) and put at their place in the list, instead of the podcast's whole list read again.
// A player's `setProgress` every second names one episode of a feed that may hold thousands.
import { matchEpisode } from './episode-identity.ts';
import type { SyncError } from './errors.ts';
import { patch, type Named } from './sorted.ts';
import type { EpisodeRef, EpisodeState, SyncApi } from './types.ts';

/** Up to this many episodes of a podcast named since its last read are read alone; more, and its whole list is. */
const FEW = 8;

/** Whose episodes the next read covers: a podcast → the refs changes named (undefined: its whole list). */
export type EpisodeReads = Map<string | undefined, EpisodeRef[] | undefined>;

/** Mark `ref` for the next read of its podcast (the whole list when that is already due, or too many are named). */
export function askRef(reads: EpisodeReads, ref: EpisodeRef): void {
  const named = reads.has(ref.podcast) ? reads.get(ref.podcast) : [];
  reads.set(ref.podcast, named && named.length < FEW ? [...named, ref] : undefined);
}

/** What a read of one podcast's episodes gave: its whole list, or the named refs and their states. */
export type EpisodesRead = EpisodeState[] | { refs: EpisodeRef[]; states: (EpisodeState | undefined)[] };

/** Read what `refs` asks of `podcast` (undefined: the whole list); `[]` where the protocol has no listening state. */
export function readEpisodes(source: Pick<SyncApi, 'episode' | 'episodes'>, podcast: string, refs: EpisodeRef[] | undefined): Promise<EpisodesRead> {
  const read: Promise<EpisodesRead> = refs ? Promise.all(refs.map((ref) => source.episode(ref))).then((states) => ({ refs, states })) : source.episodes({ podcast });
  // A protocol with no listening state (OPA): no episodes, and the store still gets ready.
  return read.catch((error: SyncError) => (error?.code === 'unsupported' ? [] : Promise.reject(error)));
}

/** The engine's order of a podcast's episodes (`episodes({ podcast })`): newest change first, then by URL. */
const before = (a: EpisodeState, b: EpisodeState) => (a.changedAt === b.changedAt ? a.episode.localeCompare(b.episode) < 0 : a.changedAt > b.changedAt);

/**
 * `list` (a podcast's episodes in the engine's order) with each named episode's state replaced, moved to its
 * place, added, or removed (not found, or now another podcast's); see `patch`.
 */
export function patchEpisodes(list: readonly EpisodeState[], podcast: string, read: Exclude<EpisodesRead, EpisodeState[]>, keep: (was: EpisodeState | undefined, now: EpisodeState) => EpisodeState): readonly EpisodeState[] {
  const named = read.refs.map((ref, i): Named<EpisodeState> => {
    const state = read.states[i];
    // The engine's identity rule; by the state read too: a guid learned since, an enclosure URL the server renamed.
    return [(at) => at.indexOf((matchEpisode(ref, at) ?? (state && matchEpisode(state, at)))!), state?.podcast === podcast ? state : undefined];
  });
  return patch(list, named, before, keep);
}
