// The public methods: check the arguments, reach the store through the guard for the kind of call (see
// binding.ts), delegate. No sync logic lives here.
import { SyncError } from '../../src/errors.ts';
import type { Auth, EpisodeState, SubscriptionChange, SubscriptionFilter, SyncReport } from '../../src/types.ts';
import { authAccount, checkAuth } from '../options.ts';
import type { Store } from './store.ts';
import type { SyncEngine } from './sync-engine.ts';
import { alive, typed } from './guards.ts';
import { reader, whenBound, writer } from './binding.ts';
import type { EngineContext } from './context.ts';
import { episodeMethods, emitEpisodes } from './episodes.ts';
import { emit, emitChange } from './events.ts';
import { checkChange, checkDeletionId, checkFeedUrl, checkFeedUrls, checkFilter, checkGuid } from './input.ts';
import { background, cancelAll, requestSync, schedulePush } from './schedule.ts';
import { snapshot } from './snapshot.ts';
import { idlePhase, setPhase } from './status.ts';
import { pullSoon } from './poll.ts';
import { sync } from './sync.ts';

/** A local edit: durable when it resolves, announced, and pushed soon (by this tab or the leader). It binds an unbound store. */
async function local<T>(ctx: EngineContext, edit: (store: Store) => Promise<{ result: T; changed: string[] }>, unchangedIsNothing = false): Promise<T> {
  alive(ctx);
  const { result, changed } = await typed(() => edit(writer(ctx)));
  // An update that changes no row wrote nothing: no event, no push.
  if (unchangedIsNothing && !changed.length) return result;
  // Every other local edit writes a queue entry (or drops one: retry, discard).
  // Its own transaction told the page's copy with it: its event starts no rebuild (see `watchLastChance`).
  ctx.told = true;
  emitChange(ctx, changed, true);
  ctx.told = false;
  if (ctx.leadership.isLeader) schedulePush(ctx);
  else ctx.channel.post({ type: 'queued' });
  return result;
}

/** A local listening-state change: durable when it resolves, announced, pushed soon (throttled per episode). */
async function localEpisode(ctx: EngineContext, edit: (store: Store) => Promise<EpisodeState>): Promise<EpisodeState> {
  alive(ctx);
  const state = await typed(() => edit(writer(ctx)));
  ctx.told = true;
  emitEpisodes(ctx, [{ podcast: state.podcast, episode: state.episode, ...(state.guid !== undefined && { guid: state.guid }) }]);
  ctx.told = false;
  if (ctx.leadership.isLeader) schedulePush(ctx);
  else ctx.channel.post({ type: 'queued' });
  return state;
}

/** A read of the local view: another's store is refused, an unbound one claimed by no one. */
async function read<T>(ctx: EngineContext, work: (store: Store) => Promise<T>): Promise<T> {
  alive(ctx);
  return typed(() => work(reader(ctx)));
}

/** Build the engine's public object over its context. */
export function createApi(ctx: EngineContext): Omit<SyncEngine, 'onLastChance'> {
  const { store, state, work, clock } = ctx;
  const unsupported = (what: string) => new SyncError('unsupported', `${what} is not part of the ${ctx.transport.protocol} protocol`);
  return {
    sync: () => sync(ctx),
    subscriptions: async (filter?: SubscriptionFilter) => read(ctx, (s) => s.list(checkFilter(filter))),
    subscription: async (guid: string) => read(ctx, (s) => s.get(checkGuid(guid))),

    async add(feedUrl: string, options?: { guid?: string }) {
      const url = checkFeedUrl(feedUrl);
      let guid = options?.guid === undefined ? undefined : checkGuid(options.guid);
      const { guidFor } = ctx.transport;
      if (guidFor) {
        // The protocol names a subscription by its feed URL: no other guid can be kept.
        if (guid !== undefined && guid !== guidFor(url)) throw unsupported('a guid of its own for a subscription');
        guid = guidFor(url);
      }
      return local(ctx, (s) => s.add(url, guid, clock.now(), work.inFlight));
    },

    async addMany(feedUrls: readonly string[]) {
      const { feeds, skipped } = checkFeedUrls(feedUrls);
      const report = await local(ctx, (s) => s.addMany(feeds, ctx.transport.guidFor, clock.now(), work.inFlight), true);
      return { ...report, skipped };
    },

    async update(guid: string, change: SubscriptionChange) {
      checkGuid(guid);
      const clean = checkChange(change);
      if (clean.guid !== undefined && !ctx.transport.guidChanges) throw unsupported('a guid change');
      if (clean.feedUrl !== undefined && ctx.transport.guidFor) {
        // Where the guid is the feed URL, a new feed URL is a new guid (the old one keeps leading to it). The move
        // carries the flag the app sees now: a replay after a lost answer must not read the move's own effect
        // (the old URL gone from the server) as the feed being unsubscribed.
        clean.guid = ctx.transport.guidFor(clean.feedUrl);
        clean.isSubscribed ??= (await read(ctx, (s) => s.get(guid)))?.isSubscribed;
      }
      return local(ctx, (s) => s.update(guid, clean, clock.now(), work.inFlight), true);
    },

    async remove(guid: string) {
      checkGuid(guid);
      await local(ctx, (s) => s.remove(guid, clock.now(), work.inFlight));
    },

    async deletion(id: number) {
      alive(ctx);
      checkDeletionId(id);
      if (!ctx.transport.deletion) throw unsupported('deletion status');
      return ctx.transport.deletion(id);
    },

    pending: () => read(ctx, (s) => s.pending()),
    failed: () => read(ctx, (s) => s.failed()),
    retry: async (id: number) => void (await local(ctx, (s) => s.retry(id))),
    discard: async (id: number) => void (await local(ctx, (s) => s.discard(id))),
    status: () => snapshot(ctx),
    ...episodeMethods(ctx, (edit) => localEpisode(ctx, edit), (work) => read(ctx, work)),

    async setAuth(next: Auth) {
      alive(ctx);
      const auth = checkAuth(next);
      // The store is bound to one account: credentials of another are refused (the old ones stay). Paths built
      // from the bound account would not do: Nextcloud's name no user and opodsync ignores the one named (the
      // credentials choose the list), and mygpo refuses them as if the credentials were wrong. An engine that
      // knew no account yet takes this one.
      const account = authAccount(ctx.opts.protocol, auth);
      if (account !== undefined && ctx.binding.account !== undefined && account !== ctx.binding.account) {
        throw new SyncError('account-mismatch', `the credentials are ${account}'s, but this engine's store is ${ctx.binding.account}'s: create an engine for ${account} (on this dbName, after clear())`);
      }
      if (account !== undefined) ctx.binding.account = account;
      state.auth = auth;
      if (!state.authPaused) return;
      state.authPaused = false;
      state.lastError = undefined;
      setPhase(ctx, idlePhase(ctx));
      background(ctx, 'sync');
    },

    async clear() {
      alive(ctx);
      await ctx.bound?.catch(() => undefined);
      await ctx.runs.running?.catch(() => undefined);
      const keys = await store.allKeys().catch(() => [] as string[]);
      const episodes = await store.episodes.allRefs().catch(() => []);
      await store.clear();
      // The store belongs to no one now: the next use binds it again (to whoever uses it first).
      ctx.bound = undefined;
      state.lastError = undefined;
      emitChange(ctx, keys, true);
      emitEpisodes(ctx, episodes);
    },

    async close() {
      if (state.closed) return;
      state.closed = true;
      state.phase = 'closed';
      cancelAll(ctx);
      ctx.closing.abort();
      const error = () => new SyncError('closed', 'the engine is closed');
      for (const waiter of ctx.runs.forwarded.values()) waiter.reject(error());
      ctx.runs.forwarded.clear();
      ctx.runs.nextSync?.reject(error());
      ctx.runs.nextSync = undefined;
      await ctx.runs.running?.catch(() => undefined);
      ctx.leadership.release();
      ctx.channel.close();
      ctx.db.close();
      emit(ctx, 'status', await snapshot(ctx));
    },

    on(event, listener) {
      const set = ctx.listeners[event] as Set<typeof listener>;
      set.add(listener);
      return () => void set.delete(listener);
    },

    setOnline(online: boolean) {
      if (state.browserOnline === online) return;
      state.browserOnline = online;
      if (online) state.reachable = true;
      setPhase(ctx, ctx.runs.running ? state.phase : idlePhase(ctx));
      if (online) background(ctx, 'sync');
    },

    setVisible(visible: boolean) {
      state.visible = visible;
      if (visible) return pullSoon(ctx);
      // Hidden, or being unloaded: the listening state waiting out its interval goes now (the tab may not return).
      work.flushEpisodes = true;
      schedulePush(ctx, 0);
    },
  };
}
