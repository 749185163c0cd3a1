// The sync engine: builds the context its parts share and hands back the public object.
import { openSyncDatabase } from '../src/schema.ts';
import type { SyncOptions } from '../src/types.ts';
import { openChannel } from './channel.ts';
import { randomUuid, steadyNow } from './clock.ts';
import { createApi } from './engine/api.ts';
import type { EngineContext, EngineState, RunState } from './engine/context.ts';
import { emitStatus } from './engine/events.ts';
import { emitEpisodes } from './engine/episodes.ts';
import { watchLastChance } from './engine/last-chance.ts';
import { startPolling } from './engine/poll.ts';
import { execute } from './engine/run.ts';
import { background } from './engine/schedule.ts';
import { idlePhase, setPhase } from './engine/status.ts';
import type { SyncEngine } from './engine/sync-engine.ts';
import { runForwardedHere } from './engine/sync.ts';
import { onMessage } from './engine/tabs.ts';
import { createHttp } from './http.ts';
import { acquireLeadership } from './leader.ts';
import { createGpodderTransport } from './gpodder/transport.ts';
import { createOpaTransport } from './opa/transport.ts';
import { resolveOptions } from './options.ts';
import { createEngineStore } from './engine/store.ts';
import { rememberStore } from './sw-registry.ts';

/** Create the sync engine; it runs wherever IndexedDB and fetch exist. */
export function createSyncEngine(options: SyncOptions): SyncEngine {
  const opts = resolveOptions(options);
  const { clock } = opts;
  const db = openSyncDatabase(opts.dbName);
  const closing = new AbortController();
  const state: EngineState = {
    auth: opts.auth,
    // Until this context leads or hears from the tab that does: whether this tab syncs is not known yet.
    phase: 'starting',
    browserOnline: (globalThis as { navigator?: { onLine?: boolean } }).navigator?.onLine ?? true,
    reachable: true,
    visible: true,
    requests: 0,
  };
  const runs: RunState = {
    nextBackground: true,
    timers: new Set(),
    forwarded: new Map(),
  };
  const http = createHttp({
    baseUrl: opts.baseUrl,
    fetch: opts.fetch,
    clock,
    timeout: opts.timeout,
    auth: () => state.auth,
    signal: closing.signal,
    onRequest: () => void state.requests++,
    onResponse: () => {
      if (state.reachable) return;
      state.reachable = true;
      emitStatus(ctx);
    },
  });
  const transport =
    opts.protocol === 'opa'
      ? createOpaTransport(http, clock, opts.pageSize)
      : createGpodderTransport({
          protocol: opts.protocol,
          http,
          auth: () => state.auth,
          account: opts.account,
          device: opts.device,
          now: () => clock.now(),
          // Saved through the run's store: marks of an upload must not land in a store wiped meanwhile.
          memo: { load: () => store.transportMemo(), save: (value) => (ctx.runs.store ?? store).setTransportMemo(value) },
        });
  // Episodes that moved with their feed's URL (whatever edit moved it) are told like any episode change.
  const store = createEngineStore(db, () => `local-${randomUuid(clock.random)}`, (episodes) => emitEpisodes(ctx, episodes), () => ctx.copy, transport.copies);
  const binding = { server: opts.baseUrl, protocol: transport.protocol, ...(opts.account !== undefined && { account: opts.account }) };
  const ctx: EngineContext = {
    opts,
    clock,
    steadyNow: steadyNow(clock),
    db,
    store,
    transport,
    binding,
    closing,
    state,
    runs,
    work: {
      pullFailures: 0,
      inFlight: new Set(),
      // No page in a service worker: every pending episode change goes with its first push.
      flushEpisodes: opts.by == 'sw',
    },
    execute: (kind, fromTimer) => execute(ctx, kind, fromTimer),
    listeners: { change: new Set(), status: new Set() },
    channel: openChannel(opts.dbName, (message) => onMessage(ctx, message)),
    leadership: acquireLeadership(opts.dbName, () => {
      if (state.closed) return;
      if (state.phase === 'starting') setPhase(ctx, idlePhase(ctx));
      emitStatus(ctx);
      // A tab shows the server's word, so it pulls; a service worker sends what waits (its first run pulls only
      // when a change needs the server's word first, see `takeOver`).
      background(ctx, opts.by == 'sw' ? 'push' : 'sync');
      runForwardedHere(ctx);
    }),
  };
  // What opa-sync/sw needs to push for this store with every page closed (credentials stay with the app; a gPodder
  // session's cookie is the browser's, so that store needs none from it).
  if (options.backgroundSync) {
    const { dbName, baseUrl, protocol, device, account } = opts;
    void rememberStore({ dbName, baseUrl, protocol, device, ...(account !== undefined && { account }), authed: !!opts.auth && opts.auth.type != 'session' }).catch(() => undefined);
  }
  ctx.channel.post({ type: 'hello' });
  startPolling(ctx);
  // Nothing is claimed here: a read claims nothing, a local edit or a sync binds the store.
  return { ...createApi(ctx), onLastChance: (listener) => watchLastChance(ctx, listener) };
}
