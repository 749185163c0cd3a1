// The last-chance copy: what waits in the shared outbox, as the requests the next push would make, kept ready
// for the page. The worker dies with its page, so only a request the page itself starts (`keepalive`,
// `fetchLater`) outlives an unload; nothing may be read or asked at that moment, so the copy is rebuilt
// whenever the queue changes (here, in another tab, or by an acknowledgement) and handed over at once.
// Every tab keeps one, leader or not: the tab being closed may hold changes the leader has not sent yet.
import type { LastChanceRequest } from '../../src/protocol.ts';
import type { StoredChange, StoredEpisode } from '../../src/schema.ts';
import { MAX_ACTIONS_PER_UPLOAD, playAction } from '../episodes/push.ts';
import { lastChanceRequest } from '../http.ts';
import { choose } from '../plan.ts';
import { mayGo } from '../store/delivery.ts';
import type { WireRequest } from '../transport.ts';
import { reader } from './binding.ts';
import type { EngineContext } from './context.ts';

/** Most body bytes the copy holds: browsers cap the keepalive bodies of one page in flight at 64 KiB in all. */
export const LAST_CHANCE_BYTES = 64 * 1024;
/** Most requests in the copy: Chromium once refused more than 9 keepalive requests in flight per renderer. */
export const LAST_CHANCE_REQUESTS = 8;

const bytes = (request: LastChanceRequest) => (request.body === undefined ? 0 : new TextEncoder().encode(request.body).length);

/**
 * Build the copy: episode actions first (one per episode, newest first, in one upload; the oldest left out until
 * it fits), then subscription changes as the transport would send them (heads, and for a batching protocol the
 * flag changes behind them); a request that does not fit what is left of the budget waits for the next open.
 */
export async function buildLastChance(ctx: EngineContext): Promise<LastChanceRequest[]> {
  const { store, transport } = ctx;
  const out: LastChanceRequest[] = [];
  let left = LAST_CHANCE_BYTES;
  const take = (request: LastChanceRequest): boolean => {
    const size = bytes(request);
    if (size > left || out.length >= LAST_CHANCE_REQUESTS) return false;
    out.push(request);
    left -= size;
    return true;
  };
  const episodes = transport.episodes;
  if (episodes?.lastChance) {
    // As the push: only feeds the account has here and on the server (opodsync subscribes any feed an action names).
    const feeds = await store.keptFeeds();
    const rows: StoredEpisode[] = (await store.episodes.due(0, true, (podcast) => feeds.has(podcast))).reverse();
    const actions = rows.slice(0, MAX_ACTIONS_PER_UPLOAD).map((row) => playAction(row, ctx.opts.device));
    while (actions.length && !take(episodes.lastChance(actions))) actions.pop();
  }
  // The push's plan and the push's rule (`mayGo`): a change that may have reached the server and is not harmless
  // to repeat waits for the server's word here too (a copy sent at close re-subscribed a feed another device had
  // removed since an upload whose answer was lost). One this page's worker is sending right now counts as not
  // sent: the page may go before its answer. (WebKit aborts that request as the page navigates, before
  // pagehide: a copy rebuilt meanwhile leaves the change to the next open, which pulls first.)
  const pulls = await store.pulls();
  // Only what the copy may carry (`copies`): nothing else is read or planned.
  const open = (c: StoredChange) => transport.copies?.(c) !== false && (mayGo(c, pulls) || ctx.work.inFlight.has(c.id!));
  const { going } = choose(await store.pendingChanges(), transport, { now: 0, copy: true, open });
  // Where each change has a request of its own, no more are read and planned than the copy can hold: an edit
  // builds the copy in its own transaction, so a long queue would cost every edit two reads per change (a
  // deletion job's GET among them leaves its place empty). A batching protocol's uploads carry whole units,
  // which are cut by size alone.
  for (const request of transport.plan(await store.sendItems(transport.batching === 'all' ? going : going.slice(0, LAST_CHANCE_REQUESTS)))) {
    // Its writes: a deletion job's GET (or a change with no request this time) waits for the next open.
    const { method, path, body } = request as WireRequest;
    if (method && method !== 'GET') take(lastChanceRequest(method, path, body));
  }
  return out;
}

/**
 * Tell `publish` the copy now and whenever it changes. A local edit builds it inside its own transaction and
 * tells it once committed, before it resolves (`ctx.copy`, run by the store); any other change event (another
 * tab's edit, an acknowledgement, a pull) rebuilds it in a read-only transaction, one at a time. Each copy is
 * told as its transaction completes: IndexedDB runs transactions whose tables overlap (these all do) in the
 * order they were created, so no copy is told after one that was read later. A build that fails keeps the last
 * copy told; one that failed in an edit's transaction is read again after it. Returns the stop.
 */
export function watchLastChance(ctx: EngineContext, publish: (copy: LastChanceRequest[]) => unknown): () => void {
  let told: string | undefined;
  const build = async (edit?: boolean) => {
    const copy = await buildLastChance(ctx).catch(() => undefined);
    return () => {
      // One an edit's transaction could not read is read again (its own event starts no rebuild).
      if (!copy) return void (edit && rebuild());
      if (!ctx.state.closed && told !== (told = JSON.stringify(copy))) publish(copy);
    };
  };
  let running: Promise<unknown> | undefined;
  let again = false;
  const rebuild = () => {
    // A local edit's own event: its transaction told the copy with it.
    if (ctx.told) return;
    if (running) return void (again = true);
    running = reader(ctx)
      .together(() => build())
      .then((tell) => tell(), () => undefined)
      .finally(() => {
        running = undefined;
        if (again) (again = false), rebuild();
      });
  };
  ctx.listeners.change.add(rebuild);
  const inEdit = () => build(true);
  ctx.copy = inEdit;
  rebuild();
  return () => {
    ctx.listeners.change.delete(rebuild);
    if (ctx.copy === inEdit) ctx.copy = undefined;
  };
}
