// Push listening state: every due episode's one pending change as a `play` action, in uploads of at most 100
// (mygpo hands bigger ones to a background queue), each settled on its own answer. An upload the server
// refuses whole is split until the refused episode is found, as subscription uploads are.
import { SyncError, isSyncError, isTransient } from '../../src/errors.ts';
import type { StoredEpisode } from '../../src/schema.ts';
import type { Clock, EpisodeRef } from '../../src/types.ts';
import { backoffDelay, type Backoff } from '../backoff.ts';
import { errorInfo } from '../error-info.ts';
import { formatActionTime, type WirePlayAction } from '../gpodder/episode-wire.ts';
import type { EpisodeTransport } from '../gpodder/episodes.ts';
import { changedAt } from './register.ts';
import { uploadPlay } from './upload-play.ts';
import type { EpisodeStore, EpisodeUpload } from './store.ts';

/** Most actions in one upload. */
export const MAX_ACTIONS_PER_UPLOAD = 100;

/** What an episode push needs. */
export interface EpisodePushContext {
  transport: EpisodeTransport;
  store: EpisodeStore;
  clock: Clock;
  /** The engine's steady device time (waits are measured in it). */
  now(): number;
  backoff: Backoff;
  device: string;
  /** ms between two uploads of one episode's progress. */
  interval: number;
  /** Send every pending change now (sync(), the page going hidden), not only the due ones. */
  flush: boolean;
  /** Whether the account subscribes to this feed now: actions for other feeds wait (opodsync would subscribe it). */
  subscribed(podcast: string): boolean;
  halted(): boolean;
  onUnauthorized(error: SyncError): void;
  onError(error: SyncError): void;
  onChange(refs: EpisodeRef[]): void;
}

/**
 * The `play` action that carries a row's state, stamped with the time of the local change (cut to whole
 * seconds), not of the upload; `started` never repeats an earlier upload of this episode (upload-play.ts).
 */
export function playAction(row: StoredEpisode, device: string): WirePlayAction {
  const { started, position, total } = uploadPlay(row);
  const action: WirePlayAction = {
    podcast: row.podcast,
    episode: row.episode,
    device,
    action: 'play',
    timestamp: formatActionTime(row.pending?.at ?? changedAt(row)),
    started,
    position,
  };
  // No total when none is known: a made-up one would come back as the episode's length.
  if (total !== undefined) action.total = total;
  if (row.guid !== undefined) action.guid = row.guid;
  return action;
}

/** Upload every due episode change; resolves with how many the server took. */
export async function pushEpisodes(ctx: EpisodePushContext): Promise<number> {
  const due = (await ctx.store.due(ctx.now(), ctx.flush)).filter((row) => ctx.subscribed(row.podcast));
  let pushed = 0;
  for (let i = 0; i < due.length && !ctx.halted(); i += MAX_ACTIONS_PER_UPLOAD) {
    const batch = due.slice(i, i + MAX_ACTIONS_PER_UPLOAD).map((row) => ({ row, version: row.pending!.version }));
    const result = await sendSplitting(ctx, batch);
    if (result === 'stop') break;
    pushed += result;
  }
  return pushed;
}

/** Send one batch; on a refusal of the whole, halves until the refused ones are found. */
async function sendSplitting(ctx: EpisodePushContext, batch: EpisodeUpload[]): Promise<number | 'stop'> {
  const { store, clock } = ctx;
  const settle = async (uploads: EpisodeUpload[], outcome: Parameters<EpisodeStore['settle']>[3]) => {
    const refs = await store.settle(uploads, ctx.now(), ctx.interval, outcome);
    if (refs.length) ctx.onChange(refs);
  };
  try {
    await ctx.transport.send(batch.map((u) => playAction(u.row, ctx.device)));
    await settle(batch, {});
    return batch.length;
  } catch (caught) {
    if (!isSyncError(caught)) throw caught;
    const error: SyncError = caught;
    if (error.code === 'closed') return 'stop';
    if (error.code === 'unauthorized') {
      ctx.onUnauthorized(error);
      return 'stop';
    }
    const attempts = Math.max(...batch.map((u) => u.row.pending!.attempts));
    const retryAt = ctx.now() + backoffDelay(ctx.backoff, attempts, error.retryAfter, clock.random);
    // A refusal of the whole upload (400, 413, 422): split it; a single refused action keeps its error on the episode.
    if (error.code === 'invalid' || error.status === 413) {
      if (batch.length === 1) {
        await settle(batch, { error: errorInfo(error) });
        return 0;
      }
      const half = Math.ceil(batch.length / 2);
      const first = await sendSplitting(ctx, batch.slice(0, half));
      if (first === 'stop') return 'stop';
      const second = await sendSplitting(ctx, batch.slice(half));
      return second === 'stop' ? 'stop' : first + second;
    }
    // Transient trouble, or a 2xx that is not the answer: keep them queued and back off; nothing is lost.
    ctx.onError(error);
    await settle(batch, { error: errorInfo(error), retryAt });
    return isTransient(error) ? 'stop' : 0;
  }
}
