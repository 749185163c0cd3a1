// Push listening state: once one episode's change is due, every pending one (a backoff or the progress interval
// delays an upload, not what it carries; a server's Retry-After does) as a `play` action, in uploads of at most 100
// (mygpo hands bigger ones to a background queue), each settled on its own answer. An upload the server
// refuses whole is split until the refused episode is found, as subscription uploads are; so is one answered
// 5xx three times in a row (a server that chokes on one action, as the Nextcloud app on a media URL over 500
// characters, must not hold the others back).
import { SyncError, isSyncError } from '../../src/errors.ts';
import { isTransient } from '../transient.ts';
import type { StoredEpisode } from '../../src/schema.ts';
import type { Clock, EpisodeRef } from '../../src/types.ts';
import { backoffDelay, type Backoff } from '../backoff.ts';
import { errorInfo } from '../error-info.ts';
import { formatActionTime } from '../gpodder/episode-wire.ts';
import type { EpisodeTransport, WirePlayAction } from './actions.ts';
import { changedAt } from './register.ts';
import { uploadPlay } from './upload-play.ts';
import type { EpisodeStore, EpisodeUpload } from './store.ts';

/** Most actions in one upload. */
export const MAX_ACTIONS_PER_UPLOAD = 100;
/** 5xx answers in a row to the uploads carrying a change after which its upload is split as a refused one. */
export const SERVER_ERRORS_TO_SPLIT = 3;

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

/** How an upload went: the number of actions taken, stop the push, or answered 5xx with nothing yet known. */
type Sent = number | 'stop' | { unproven: SyncError };

/** Upload every due episode change; resolves with how many the server took. */
export async function pushEpisodes(ctx: EpisodePushContext): Promise<number> {
  // What this push saw: whether the server took any upload (it is up), and the 5xx answers per row id.
  let accepted = false;
  const fails = new Map<string, number>();

  /** 5xx answers in a row to the uploads carrying this change (before this push, and in it). */
  const streak = (u: EpisodeUpload) => (u.row.pending!.serverErrors ?? 0) + (fails.get(u.row.id) ?? 0);

  async function settle(uploads: EpisodeUpload[], outcome: Parameters<EpisodeStore['settle']>[3]): Promise<void> {
    if (!uploads.length) return;
    const refs = await ctx.store.settle(uploads, ctx.now(), ctx.interval, outcome);
    if (refs.length) ctx.onChange(refs);
  }

  /**
   * Settle an upload the server took: each episode whose URL it rewrote keeps the URL it stores (sent from then
   * on), one whose URL (or feed URL) it refused (`""`) keeps the refusal as its `error`. Resolves with how many it took.
   */
  async function settleUploaded(batch: EpisodeUpload[], sent: readonly WirePlayAction[], renamed: Map<string, string>): Promise<number> {
    const taken: EpisodeUpload[] = [];
    const refused: [EpisodeUpload, string][] = [];
    batch.forEach((u, i) => {
      const { podcast, episode } = sent[i]!;
      const url = renamed.get(episode);
      if (url === '' || renamed.get(podcast) === '') refused.push([u, url === '' ? episode : podcast]);
      else taken.push(url === undefined ? u : { ...u, sent: episode, renamed: url });
    });
    await settle(taken, {});
    for (const [u, url] of refused) await settle([u], { error: { code: 'invalid', message: `the server refused the URL ${url}`, status: 200 } });
    return taken.length;
  }

  /**
   * Send one batch. On a refusal of the whole (400, 413, 422), halve it until the refused actions are found. On a
   * 5xx it backs off; the third in a row splits it the same way (see `findChoking`). `choked`: this batch is half
   * of one being split on 5xx answers, and its caller decides what a 5xx means.
   */
  async function sendSplitting(batch: EpisodeUpload[], choked: boolean): Promise<Sent> {
    const sent = batch.map((u) => playAction(u.row, ctx.device));
    try {
      const { renamed } = await ctx.transport.send(sent);
      accepted = true;
      return await settleUploaded(batch, sent, renamed);
    } catch (caught) {
      if (!isSyncError(caught)) throw caught;
      const error: SyncError = caught;
      if (error.code === 'closed') return 'stop';
      if (error.code === 'unauthorized') {
        ctx.onUnauthorized(error);
        return 'stop';
      }
      // A refusal of the whole upload (400, 413, 422): split it; a single refused action keeps its error on the episode.
      if (error.code === 'invalid' || error.status === 413) {
        if (batch.length === 1) {
          await settle(batch, { error: errorInfo(error) });
          return 0;
        }
        const half = Math.ceil(batch.length / 2);
        const first = await sendSplitting(batch.slice(0, half), false);
        if (typeof first !== 'number') return 'stop';
        const second = await sendSplitting(batch.slice(half), false);
        return typeof second !== 'number' ? 'stop' : first + second;
      }
      // Transient trouble, or a 2xx that is not the answer: keep them queued and back off; nothing is lost. The
      // backoff is written before any split is tried, so a split cut short by anything keeps it.
      const attempts = Math.max(...batch.map((u) => u.row.pending!.attempts));
      const now = ctx.now();
      const retryAt = now + backoffDelay(ctx.backoff, attempts, error.retryAfter, ctx.clock.random);
      ctx.onError(error);
      await settle(batch, { error: errorInfo(error), retryAt, ...(error.retryAfter === undefined ? {} : { serverHold: now + error.retryAfter }) });
      if (error.code !== 'server') return isTransient(error) ? 'stop' : 0;
      for (const u of batch) fails.set(u.row.id, (fails.get(u.row.id) ?? 0) + 1);
      if (choked) return { unproven: error };
      if (Math.max(...batch.map((u) => streak(u))) < SERVER_ERRORS_TO_SPLIT) return 'stop';
      const found = await findChoking(batch, error);
      return typeof found === 'object' ? 'stop' : found;
    }
  }

  /**
   * A batch just answered 5xx (and backed off): send its halves. When neither goes through and no other upload
   * of this push did, the server is in trouble, not choking on one action: everything stays queued (`unproven`).
   * Once the server took something, a half answered 5xx is split again, down to the single action, which is
   * refused for good (its `error`, out of the queue) when its own uploads were answered 5xx three times in a row.
   */
  async function findChoking(batch: EpisodeUpload[], error: SyncError): Promise<Sent> {
    if (batch.length === 1) {
      if (!accepted) return { unproven: error };
      if (streak(batch[0]!) >= SERVER_ERRORS_TO_SPLIT) await settle(batch, { error: errorInfo(error) });
      return 0;
    }
    const half = Math.ceil(batch.length / 2);
    const parts = [batch.slice(0, half), batch.slice(half)];
    const results: Sent[] = [];
    for (const part of parts) {
      const result = await sendSplitting(part, true);
      if (result === 'stop') return 'stop';
      results.push(result);
    }
    if (!accepted) return { unproven: error };
    let taken = 0;
    for (let i = 0; i < parts.length; i++) {
      const result = results[i]!;
      const found = typeof result === 'object' ? await findChoking(parts[i]!, result.unproven) : result;
      if (found === 'stop') return 'stop';
      if (typeof found === 'number') taken += found;
    }
    return taken;
  }

  const due = await ctx.store.due(ctx.now(), ctx.flush, ctx.subscribed);
  let pushed = 0;
  for (let i = 0; i < due.length && !ctx.halted(); i += MAX_ACTIONS_PER_UPLOAD) {
    const batch = due.slice(i, i + MAX_ACTIONS_PER_UPLOAD).map((row) => ({ row, version: row.pending!.version }));
    const result = await sendSplitting(batch, false);
    if (typeof result !== 'number') break;
    pushed += result;
  }
  return pushed;
}
