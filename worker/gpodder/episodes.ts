// Episode actions over gPodder v2 and the Nextcloud app: one pull request per page, one upload per batch.
import { SyncError } from '../../src/errors.ts';
import { lastChanceRequest, type Http } from '../http.ts';
import type { EpisodeTransport } from '../episodes/actions.ts';
import { episodeActionsReader } from './episode-wire.ts';
import { renames } from './renames.ts';
import { parseUploaded } from './wire.ts';

/**
 * Most bytes of one episode pull answer: 64 MiB. opodsync and the Nextcloud app never page, so a full reconcile
 * of a long-used opodsync account (every upload a row of ~300–400 bytes) is one answer of tens of MB. It is read
 * as it arrives and reduced at once (never held whole), so this bounds the wait, not the memory.
 */
export const MAX_EPISODE_BODY_BYTES = 64 * 1024 * 1024;
/** Most actions one answer may hold: a real 64 MiB answer holds ~200,000; this bounds a hostile one of tiny items. */
export const MAX_ACTIONS_PER_ANSWER = 1_000_000;
/** mygpo's page: an answer this full means more may follow (`timestamp` is then the last action's time). */
export const MYGPO_PAGE = 1000;

/** The episode-action endpoints of a dialect (`user` as the subscription paths name it). */
export function episodePaths(protocol: 'gpodder' | 'nextcloud', user: string): { pull: string; upload: string } {
  if (protocol === 'nextcloud') return { pull: 'index.php/apps/gpoddersync/episode_action', upload: 'index.php/apps/gpoddersync/episode_action/create' };
  const path = `api/2/episodes/${encodeURIComponent(user)}.json`;
  return { pull: path, upload: path };
}

/** Create the episode side of the gPodder transport. */
export function createEpisodeTransport(http: Http, paths: () => { pull: string; upload: string }, ready: () => Promise<void>): EpisodeTransport {
  return {
    lastChance: (actions) => lastChanceRequest('POST', paths().upload, actions),
    async pull(since, take) {
      await ready();
      const reader = episodeActionsReader(take, MAX_ACTIONS_PER_ANSWER);
      const answer = await http.request('GET', http.url(paths().pull, { since }), undefined, { stream: { limit: MAX_EPISODE_BODY_BYTES, write: reader.write } });
      // A 204 holds no answer.
      if (answer.status === 204) throw new SyncError('bad-response', 'episode actions: the answer is not a JSON object', { status: 204 });
      return reader.end();
    },
    async send(actions) {
      await ready();
      const answer = await http.request('POST', http.url(paths().upload), actions);
      // Every dialect answers an object with the server's `timestamp` (mygpo adds `update_urls`); anything else (an
      // empty 2xx from a proxy that never forwarded it, an HTML page) may not have reached the server: the actions
      // stay queued. A rewrite to a URL the feed-URL rule refuses is ignored (see `settleUploaded` in episodes/push.ts).
      let uploaded;
      try {
        uploaded = parseUploaded(answer.body);
      } catch (cause) {
        throw new SyncError('bad-response', `episode ${cause instanceof Error ? cause.message : 'upload answer: unreadable'}`, { status: answer.status, cause });
      }
      return { renamed: renames(uploaded.update_urls) };
    },
  };
}
