// Listening state in the engine: the public methods, the pull and push a run makes, and their events. The
// rules live in worker/episodes/; this is the glue to the context.
import { SyncError } from '../../src/errors.ts';
import type { EpisodeFilter, EpisodeRef, EpisodeState, ProgressChange } from '../../src/types.ts';
import { MAX_SECONDS } from '../gpodder/episode-wire.ts';
import { RECONCILE_INTERVAL, pullEpisodes } from '../episodes/pull.ts';
import { pushEpisodes } from '../episodes/push.ts';
import { episodeState, type LocalEpisodeChange } from '../episodes/store.ts';
import type { Store } from './store.ts';
import type { EngineContext } from './context.ts';
import { emit, emitStatus } from './events.ts';
import { alive } from './guards.ts';
import { checkFeedUrl } from './input.ts';

/** Tell this context and the other tabs which episodes changed. */
export function emitEpisodes(ctx: EngineContext, episodes: EpisodeRef[]): void {
  if (!episodes.length) return;
  emit(ctx, 'change', { guids: [], episodes });
  ctx.channel.post({ type: 'change', guids: [], episodes });
  emitStatus(ctx);
}

/** An episode reference from the app: http(s) feed and enclosure URLs, an optional non-empty guid. */
export function checkEpisodeRef(ref: unknown): EpisodeRef {
  if (typeof ref !== 'object' || ref === null) throw new SyncError('invalid', 'an episode is { podcast, episode, guid? }');
  const given = ref as Partial<EpisodeRef>;
  const clean: EpisodeRef = { podcast: checkFeedUrl(given.podcast), episode: checkFeedUrl(given.episode) };
  if (given.guid !== undefined) {
    if (typeof given.guid !== 'string' || given.guid.trim() === '') throw new SyncError('invalid', 'an episode guid must be a non-empty string');
    clean.guid = given.guid;
  }
  return clean;
}

function seconds(value: unknown, what: string, min: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > MAX_SECONDS) {
    throw new SyncError('invalid', `${what} must be a number of seconds from ${min} to ${MAX_SECONDS}`);
  }
  return value;
}

function episodesOf(ctx: EngineContext) {
  const { episodes } = ctx.transport;
  if (!episodes) throw new SyncError('unsupported', `listening state is not part of the ${ctx.transport.protocol} protocol (the Open Podcast API has no published episode interface yet)`);
  return episodes;
}

/** The listening-state methods of the public object; `local` and `read` are the API's own wrappers. */
export function episodeMethods(
  ctx: EngineContext,
  local: (edit: (store: Store) => Promise<EpisodeState>) => Promise<EpisodeState>,
  read: <T>(work: (store: Store) => Promise<T>) => Promise<T>,
) {
  // Every method checks, in this order: the protocol (`unsupported`), the engine (`closed`), the input (`invalid`).
  const usable = () => {
    episodesOf(ctx);
    alive(ctx);
  };
  const record = (ref: EpisodeRef, change: LocalEpisodeChange) =>
    local(async (store) => episodeState(await store.episodes.recordLocal(ref, change, ctx.clock.now(), ctx.steadyNow(), ctx.opts.progressInterval)));
  return {
    async setProgress(ref: EpisodeRef, progress: ProgressChange): Promise<EpisodeState> {
      usable();
      const clean = checkEpisodeRef(ref);
      if (typeof progress !== 'object' || progress === null) throw new SyncError('invalid', 'progress is { position, total? }');
      // Whole seconds: what the wire carries, and what every comparison uses.
      const change: LocalEpisodeChange['change'] = { position: Math.round(seconds(progress.position, 'position', 0)) };
      if (progress.total !== undefined) change.total = Math.max(1, Math.round(seconds(progress.total, 'total', 1)));
      return record(clean, { change, throttled: true });
    },
    async markPlayed(ref: EpisodeRef, played = true, opts?: { total?: number }): Promise<EpisodeState> {
      usable();
      const clean = checkEpisodeRef(ref);
      if (typeof played !== 'boolean') throw new SyncError('invalid', 'played must be a boolean');
      if (opts !== undefined && (typeof opts !== 'object' || opts === null)) throw new SyncError('invalid', 'options are { total? }');
      const change: LocalEpisodeChange['change'] = { played };
      if (opts?.total !== undefined) change.total = Math.max(1, Math.round(seconds(opts.total, 'total', 1)));
      return record(clean, { change, throttled: false });
    },
    async episode(ref: EpisodeRef): Promise<EpisodeState | undefined> {
      usable();
      const clean = checkEpisodeRef(ref);
      return read((store) => store.episodes.episode(clean));
    },
    async episodes(filter?: EpisodeFilter): Promise<EpisodeState[]> {
      usable();
      if (filter?.changedSince !== undefined && Number.isNaN(Date.parse(filter.changedSince))) throw new SyncError('invalid', 'changedSince must be an ISO time');
      return read((store) => store.episodes.episodes(filter));
    },
  };
}

/**
 * A run's episode pull (where the protocol has listening state): episodes changed, actions skipped as invalid. A
 * full reconcile too large to read fails the run (`bad-response`, not retried: the next reconcile waits its
 * interval) once the incremental pull is in.
 */
export async function pullEpisodeState(ctx: EngineContext, store: Store): Promise<{ pulled: number; skipped: number }> {
  const transport = ctx.transport.episodes;
  if (!transport) return { pulled: 0, skipped: 0 };
  const { refs, skipped, refused } = await pullEpisodes(transport, store.episodes, ctx.steadyNow());
  emitEpisodes(ctx, refs);
  if (refused) {
    throw new SyncError('bad-response', `listening state: the full reconcile is too large to read (${refused.message}); retried in ${RECONCILE_INTERVAL / 3_600_000} h`, {
      ...(refused.status === undefined ? {} : { status: refused.status }),
      cause: refused,
    });
  }
  return { pulled: refs.length, skipped };
}

/**
 * A run's episode push: the due changes (every pending one when `flush`); resolves with the number uploaded
 * and the device time of the next due change, for the push timer.
 */
export async function pushEpisodeState(
  ctx: EngineContext,
  store: Store,
  flush: boolean,
  hooks: Pick<Parameters<typeof pushEpisodes>[0], 'halted' | 'onUnauthorized' | 'onError'>,
): Promise<{ pushed: number; wakeAt?: number }> {
  const transport = ctx.transport.episodes;
  if (!transport) return { pushed: 0 };
  // Episode actions only for feeds the account has here and on the server: opodsync would subscribe any other
  // (a feed moved twice before the server heard of the first move would stay subscribed at the middle URL).
  const feeds = await store.keptFeeds();
  const subscribed = (podcast: string) => feeds.has(podcast);
  const pushed = await pushEpisodes({
    transport,
    store: store.episodes,
    clock: ctx.clock,
    now: ctx.steadyNow,
    backoff: ctx.opts,
    device: ctx.opts.device,
    interval: ctx.opts.progressInterval,
    flush,
    subscribed,
    onChange: (refs) => emitEpisodes(ctx, refs),
    ...hooks,
  });
  const wakeAt = await store.episodes.nextDue(subscribed, ctx.steadyNow());
  return wakeAt === undefined ? { pushed } : { pushed, wakeAt };
}
