// Episode actions over gPodder v2 and the Nextcloud app: one pull request per page, one upload per batch.
import { SyncError } from '../../src/errors.ts';
import type { Http } from '../http.ts';
import { parseEpisodeActions, type WireEpisodeActions, type WirePlayAction } from './episode-wire.ts';

/** Most actions one answer may hold (mygpo pages by 1,000; opodsync and Nextcloud do not page at all). */
export const MAX_ACTIONS_PER_ANSWER = 200_000;
/** mygpo's page: an answer this full means more may follow (`timestamp` is then the last action's time). */
export const MYGPO_PAGE = 1000;

/** What the engine asks of a protocol's episode actions. */
export interface EpisodeTransport {
  /** One pull request: the actions since `since` (seconds) and the answer's timestamp. */
  pull(since: number): Promise<WireEpisodeActions>;
  /** Upload actions (at most 100); resolves once the server took them all, else throws a `SyncError`. */
  send(actions: readonly WirePlayAction[]): Promise<void>;
}

/** The episode-action endpoints of a dialect (`user` as the subscription paths name it). */
export function episodePaths(protocol: 'gpodder' | 'nextcloud', user: string): { pull: string; upload: string } {
  if (protocol === 'nextcloud') return { pull: 'index.php/apps/gpoddersync/episode_action', upload: 'index.php/apps/gpoddersync/episode_action/create' };
  const path = `api/2/episodes/${encodeURIComponent(user)}.json`;
  return { pull: path, upload: path };
}

/** Create the episode side of the gPodder transport. */
export function createEpisodeTransport(http: Http, paths: () => { pull: string; upload: string }, ready: () => Promise<void>): EpisodeTransport {
  return {
    async pull(since) {
      await ready();
      const answer = await http.request('GET', http.url(paths().pull, { since }));
      return parseEpisodeActions(answer.body, MAX_ACTIONS_PER_ANSWER);
    },
    async send(actions) {
      await ready();
      const answer = await http.request('POST', http.url(paths().upload), actions);
      // Every dialect answers an object with the server's `timestamp`; anything else (an empty 2xx from a proxy
      // that never forwarded it, an HTML page) may not have reached the server: the actions stay queued.
      const body = answer.body as { timestamp?: unknown } | undefined;
      if (typeof body !== 'object' || body === null || typeof body.timestamp !== 'number') {
        throw new SyncError('bad-response', 'episode upload: the answer has no timestamp', { status: answer.status });
      }
    },
  };
}
