// The randomised chaos scenario: from one seed, a server, an engine and a script of local changes, foreign
// changes, syncs, crashes and faults (5xx, 429 + Retry-After, timeouts, dropped connections before and after
// the server applied the request, lost answers, latency, `next` links to other origins, refusals). Then the
// faults stop, the engine settles, and the shared invariant checker runs. A failure names its seed and carries
// the executed trace. Everything runs in simulated time (sim.ts): the engine's timers, the server's clock and
// the network's delays read one virtual clock, so `npm run chaos -- --seed N` replays the same trace exactly.
// The hostile families of issue 16 (hostile.ts) join the script as `hostile` moves when switched on (by
// default all are), with their invariants checked as the script goes: no script URL in the store, nothing of
// another account in it, no change in two requests at once, no spin.
import { isSyncError } from '../../src/errors.ts';
import { openSyncDatabase } from '../../src/schema.ts';
import type { LastChanceRequest } from '../../src/protocol.ts';
import { importOpml } from '../../src/opml-methods.ts';
import type { AddManyReport, FailedChange, Subscription, SubscriptionChange } from '../../src/types.ts';
import type { SyncEngine } from '../../worker/index.ts';
import { ForeignError } from '../server/server.ts';
import type { FaultMatch, RefServer } from '../server/types.ts';
import {
  chaosDbName,
  chaosEngine,
  chaosServer,
  localPicture,
  otherOrigin,
  readStore,
  settleEngine,
  sleep,
  Scope,
  TOKEN,
} from './fixtures.ts';
import { bulkList, checkBulkReport, describeCopy, drawFamilies, ensureDomParser, FAMILIES, opmlOf, serviceWorkerEvent, ran, sendCopy, tooLarge, type Family } from './families.ts';
import {
  ALL_HOSTILE,
  middleboxFault,
  clockStep,
  deadServer,
  gatewayDownStep,
  opaServerUrls,
  yearLong,
  type HostileFault,
} from './hostile.ts';
import {
  accountMixViolations,
  checkInvariants,
  cursorViolations,
  InvariantViolation,
  overlapViolations,
  spinViolations,
  unsafeUrlViolations,
} from './invariants.ts';
import { Model, type Field, type ModelSub } from './model.ts';
import { announcedUpdate, foldedBack, type AnnouncedUpdate } from './announced.ts';
import { prng, type Prng } from './prng.ts';
import { stallWatchdog } from './watchdog.ts';
import { createSimulation } from './sim.ts';
import { CALM, createTransport, isRedirectAsNetwork, RunawayError, type LostAnswerRule, type OutgoingRequest, type Weather } from './transport.ts';

/** What a scenario may throw at the engine. */
export interface ScenarioOptions {
  seed: number;
  /** Steps in the script. @default 40 */
  steps?: number;
  /** Also inject refusals (400/404/405/410/422, deletion rollbacks), then retry or discard what failed. */
  refusals?: boolean;
  /** Kill the engine at random points and reopen it on the same database. @default true */
  crashes?: boolean;
  /** Patterns of once-known engine bugs the script avoids (see KNOWN_ENGINE_BUGS). @default none */
  avoid?: readonly KnownBug[];
  /** A scenario still running after this many ms has hung: it fails, naming the step. @default 90000 */
  watchdog?: number;
  /** The hostile fault families (hostile.ts) the script may use; gPodder-only ones are ignored here. @default all */
  faults?: readonly HostileFault[];
  /** The soak families of issues 31 and 33 (families.ts) a seed may draw. @default all */
  families?: readonly Family[];
}

/** The hostile families that apply to the Open Podcast API scenario. */
export const OPA_HOSTILE: readonly HostileFault[] = ['clock', 'empty-2xx', 'html-2xx', 'server-urls', 'retry-after', 'redirect', 'other-tab', 'dead-server', 'slow-body', 'gateway-down'];

/** The kinds of server-side fault the generator injects. */
export type FaultKind = 'fail5xx' | 'html5xx' | 'rate-limit' | 'drop' | 'drop-after' | 'lost-answer' | 'fail-after' | 'portal' | 'refusal' | 'rollback';

/** Patterns (a fault kind, or a move of the app's script) that make today's engine lose data or hang. */
export type KnownBug =
  | 'portal'
  | 'remove-unacked-add'
  | 'edit-unacked-add'
  | 'rename-unacked-add'
  | 'close-during-edit'
  | 'deletion-before-first-cursor'
  | 'refused-rename'
  | 'copy-then-fold-back'
  | 'bulk-portal-spin'
  | 'copy-resends-unsettled-add';

/**
 * Patterns that made the engine lose data or hang when this suite was written, all fixed since; the
 * generator covers them by default. Should a new bug need steering around while it is fixed, add its pattern
 * here and to the defaults' `avoid` (and say so: the soak prints what it leaves out).
 */
export const KNOWN_ENGINE_BUGS: Record<KnownBug, string> = {
  portal: 'a 2xx whose body is not the answer (captive portal) on PATCH counts as delivered: the change is lost',
  'remove-unacked-add': 'remove() of an add that was sent but not acknowledged sends no DELETE: the server keeps it',
  'edit-unacked-add': 'a feed URL change folded into an add that was sent but not acknowledged POSTs a second subscription',
  'rename-unacked-add': 'a guid change queued behind an add: a pull between the POST and the PATCH leaves a ghost row under the server guid',
  'close-during-edit': 'close() while update() runs: the change is committed but update() rejects with InvalidStateError (BroadcastChannel closed)',
  'deletion-before-first-cursor':
    'a full pull (no cursor yet: first pull interrupted, or drained again) never lists deletions: rows stored earlier stay live while the cursor passes their deletion',
  'refused-rename': 'a refused guid change can leave an alias cycle: the row stays listed but subscription()/update()/remove() by its guid say not-found',
  'copy-then-fold-back':
    "a change the page's last copy carried as it went away is not counted as handed out: the next start folds the app's toggle back onto it and drops it, while the copy's request set the server (test/node/engine.soak-found-copy-fold-back.test.ts)",
  'bulk-portal-spin':
    'gPodder: many adds queued at once (addMany, an OPML import) while a proxy answers every upload with a 200 login page: each add backs off on its own (issue 31 item 3), 135 uploads in a simulated second, and pulls loop (gPodder seed 12 with --all: 283 pulls in 2 s) (test/node/engine.soak-found-bulk-portal.test.ts)',
  'copy-resends-unsettled-add':
    "the page's last copy carries an add that may have arrived (its answer lost) before the server's word on it: sent at close, it re-subscribes a feed another device removed meanwhile (test/node/engine.soak-found-copy-resends-add.test.ts)",
};

/** What the generator steers clear of by default while the bug is open (the soak says so in its summary). */
export const OPEN_ENGINE_BUGS: readonly KnownBug[] = [];

/** The defaults a seed runs with (the same in vitest and in the soak, so a seed replays the same way). */
export function defaultsForSeed(seed: number): Required<ScenarioOptions> {
  return { seed, steps: 40, refusals: seed % 3 === 0, crashes: true, avoid: OPEN_ENGINE_BUGS, watchdog: 90_000, faults: ALL_HOSTILE, families: FAMILIES };
}

/** The engine's request timeout in scenarios; injected delays go above it to make timeouts. */
const TIMEOUT = 600;
/** How long a script step waits for sync() before moving on. */
const SYNC_PATIENCE = 2500;

/** What a scenario did (for the soak's summary). */
export interface ScenarioResult {
  seed: number;
  ms: number;
  intents: number;
  foreign: number;
  syncs: number;
  crashes: number;
  requests: number;
  faults: number;
  failedKept: number;
  transport: Record<string, number>;
  /** What happened, step by step, in virtual time: the same seed gives the same trace. */
  trace: string[];
}

/** A scenario that broke an invariant (or could not finish), with what is needed to replay it. */
export class ScenarioFailure extends Error {
  override readonly name = 'ScenarioFailure';
  constructor(
    readonly seed: number,
    readonly reason: string,
    readonly trace: string[],
  ) {
    super(`chaos seed ${seed} failed (replay: npm run chaos -- --seed ${seed})\n${reason}\n--- steps ---\n${trace.join("\n")}`);
  }
}

const SYNC_ERRORS = new Set(['network', 'timeout', 'server', 'rate-limited', 'bad-response', 'offline', 'closed']);
/** A message as the trace keeps it: database names (process and time) and ports differ between runs of one seed. */
const traceable = (message: string) => message.replace(/database "[^"]*"/g, 'database "…"').replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:…');

const LOCAL_REJECTIONS = new Set(['not-found', 'gone', 'closed']);
const REFUSALS = [400, 404, 405, 410, 422] as const;
const HTML = '<!doctype html><html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1><p>nginx</p></body></html>';

/** Run one seeded scenario; resolves with a summary, or rejects with a `ScenarioFailure`. */
export async function runScenario(options: ScenarioOptions): Promise<ScenarioResult> {
  const opts = { ...defaultsForSeed(options.seed), ...options };
  const { seed } = opts;
  const avoid = new Set<KnownBug>(opts.avoid);
  const rng = prng(seed);
  const scope = new Scope();
  const wallStart = Date.now();
  const engineRng = rng.fork(2);
  const sim = createSimulation(() => engineRng.next());
  const simStart = sim.now();
  const trace: string[] = [];
  const note = (line: string) => trace.push(`${String(sim.now() - simStart).padStart(5)}ms ${line}`);
  const violations: string[] = [];
  const result: ScenarioResult = { seed, ms: 0, intents: 0, foreign: 0, syncs: 0, crashes: 0, requests: 0, faults: 0, failedKept: 0, transport: {}, trace };
  let server: RefServer | undefined;
  let phase = 'setup';
  let diagnose: (() => Promise<string>) | undefined;
  let stopRunaway: (message: string) => void = () => undefined;
  const runaway = new Promise<never>((_, reject) => {
    stopRunaway = (message) => reject(new RunawayError(message));
  });
  runaway.catch(() => undefined);
  const body = async () => {
    server = await chaosServer(scope, {
      seed: rng.int(3, 12),
      deletionDelayMs: rng.pick([0, 15, 60]),
      links: rng.pick(['absolute', 'relative', 'none'] as const),
      deleteStatus: rng.pick([201, 202] as const),
      time: sim.serverTime,
    });
    const s = server;
    const other = await otherOrigin(scope);
    const transport = createTransport({ serverOrigin: s.origin, otherOrigin: other.origin, rng: rng.fork(1), sim });
    transport.onRunaway = stopRunaway;
    sim.onRunaway = stopRunaway;
    const foreignNext = rng.pick([0, 0.3, 1]);
    transport.weather = { ...CALM, foreignNext };
    const config = {
      pageSize: rng.int(2, 6),
      pushDelay: rng.pick([0, 0, 5, 25]),
      timeout: TIMEOUT,
      retry: { baseDelay: 10, maxDelay: 1000, concurrency: rng.int(1, 4) },
      fetch: transport.fetch,
      clock: sim.clock,
      dbName: chaosDbName(`chaos-${seed}`),
    };
    note(`setup: ${s.state().length} entries, pageSize ${config.pageSize}, pushDelay ${config.pushDelay}, concurrency ${config.retry.concurrency}, foreignNext ${foreignNext}, refusals ${opts.refusals}`);
    // The soak families this seed runs (families.ts), from a stream of their own.
    const fr = rng.fork(6);
    /** The service worker's events after the page goes away: a stream of its own, so no other draw shifts. */
    const swr = rng.fork(11);
    const familyAt = drawFamilies(fr, opts.steps);
    for (const [at, list] of familyAt) familyAt.set(at, list.filter((f) => opts.families.includes(f)));
    const drawn = [...familyAt.values()].flat();
    if (drawn.length) note(`families: ${[...familyAt].filter(([, l]) => l.length).map(([at, l]) => `${l.join(', ')} at step ${at}`).join('; ')}`);
    /** The page listens for the last copy (only in seeds that send one: listening costs each edit a build). */
    const copies = drawn.includes('last-copy');
    /** The copy the page holds now (the open engine's last one told). */
    let lastCopy: LastChanceRequest[] = [];
    /** When the app acted (virtual ms): what the no-spin bound allows beyond the backoff schedule. */
    const appActions: number[] = [];
    const acting = ['sync', 'add', 'addMany', 'update', 'remove', 'retry', 'discard', 'setOnline', 'setAuth', 'clear'] as const;
    const open = () => {
      const e = chaosEngine(scope, s, config);
      lastCopy = [];
      if (copies) e.onLastChance((copy) => void (lastCopy = copy));
      appActions.push(sim.now());
      for (const name of acting) {
        const original = e[name] as (...args: unknown[]) => unknown;
        (e as unknown as { [key: string]: unknown })[name] = (...args: unknown[]) => {
          appActions.push(sim.now());
          return original.apply(e, args);
        };
      }
      return e;
    };
    let engine = open();
    const hostile = new Set((opts.faults ?? []).filter((f) => OPA_HOSTILE.includes(f)));
    const hr = rng.fork(3);
    let retryAfterUsed = false;
    let redirectUsed = false;
    /** Another tab signed in to another account: until `signBackAt` (a step), this engine's store is not its own. */
    let switched: { signBackAt: number } | undefined;
    let switchedEver = false;
    /** Work to do inside the next list request (a pull under way), see `arm`. */
    let armed: { what: string; run: () => Promise<void>; laterPage: boolean }[] = [];
    /** The work a pull is running for the script (calm waits for it before it switches back). */
    let midPull: Promise<void> | undefined;
    /** Work to do before a request is forwarded (the follower family's edit). */
    let hooks: ((request: OutgoingRequest) => Promise<void>)[] = [];
    transport.before = async (request) => {
      for (const hook of [...hooks]) await hook(request);
      const { method, url } = request;
      if (method !== 'GET' || !/\/subscriptions\/?$/.test(url.pathname) || !armed.length) return;
      const page = Number(url.searchParams.get('page') ?? 1);
      const now = armed.filter((a) => !a.laterPage || page >= 2);
      armed = armed.filter((a) => !now.includes(a));
      const work = (async () => {
        for (const a of now) {
          note(`mid-pull (GET page ${page}): ${a.what}`);
          await a.run();
        }
      })();
      midPull = work;
      await work;
    };
    const arm = (what: string, run: () => Promise<void>) => armed.push({ what, run, laterPage: hr.chance(0.6) });
    const seenViolations = new Set<string>();
    /** The store's rows as the page would be handed them: script URLs, another account's rows. */
    const storeCheck = async (when: string) => {
      const snapshot = await readStore(config.dbName);
      const found = [...unsafeUrlViolations(snapshot), ...accountMixViolations(snapshot, (url) => (url.includes('other-account.example') ? 'the other account' : 'this account'))];
      for (const v of found) {
        if (seenViolations.has(v)) continue;
        seenViolations.add(v);
        violations.push(`${v} (${when})`);
        note(`!! ${v}`);
      }
    };
    let server2: RefServer | undefined;
    let transport2: ReturnType<typeof createTransport> | undefined;
    /** Another tab's engine for the other account, on this database. */
    const otherTab = async () => {
      if (!server2) {
        server2 = await chaosServer(scope, { time: sim.serverTime });
        // Guids of its own: two accounts' servers do not share entry ids.
        for (let i = 0; i < 3; i++) server2.foreign.add(`https://other-account.example/s${seed}/${i}.xml`, `other-account-${seed}-${i}`);
        transport2 = createTransport({ serverOrigin: server2.origin, otherOrigin: other.origin, rng: rng.fork(4), sim });
      }
      const tab = chaosEngine(scope, server2, { ...config, fetch: transport2!.fetch });
      // A tab that is not online starts no run of its own: it only does what it is told here.
      tab.setOnline(false);
      return tab;
    };
    /** Whom the store is bound to (for traces: no port numbers, they differ from run to run). */
    const boundTo = async (): Promise<string> => {
      const db = openSyncDatabase(config.dbName);
      try {
        const binding = (await db.meta.get('binding'))?.value as { server?: string } | undefined;
        return binding?.server === undefined ? 'no one' : binding.server === s.url ? 'this account' : binding.server === server2?.url ? 'the other account' : 'someone else';
      } finally {
        db.close();
      }
    };
    const excuseAll = () => {
      for (const sub of model.subs) {
        sub.excused = true;
        sub.maybe = true;
      }
    };
    /** The other tab's sign-in under way: signing it out again waits for it (the two never interleave). */
    let signingIn: Promise<void> | undefined;
    const signOutIn = () => (signingIn = signOutInNow().finally(() => (signingIn = undefined)));
    const signOutInNow = async () => {
      const tab = await otherTab();
      // From here the store may be the other account's (its sync binds it before this step ends): edits are refused.
      switched = { signBackAt: -1 };
      await tab.clear();
      excuseAll();
      tab.setOnline(true);
      try {
        const report = await tab.sync();
        note(`other tab: cleared the store and synced another account (${report.pulled} pulled)`);
      } catch (error) {
        note(`other tab: cleared the store; its sync of another account failed: ${isSyncError(error) ? error.code : String(error)}`);
      }
      await tab.close();
      switched = { signBackAt: -1 };
      switchedEver = true;
    };
    const signBack = async (why: string) => {
      await signingIn;
      await storeCheck(`before the other tab signed out again (${why})`);
      const tab = await otherTab();
      await tab.clear();
      await tab.close();
      excuseAll();
      switched = undefined;
      appActions.push(sim.now());
      note(`other tab: cleared the store again (${why}); the store is bound to ${await boundTo()} now`);
    };
    diagnose = async () => {
      const status = await Promise.race([engine.status(), sleep(1000).then(() => 'status() did not answer')]);
      return `engine status ${JSON.stringify(status)}; requests in flight: ${JSON.stringify([...transport.inFlight.values()])}`;
    };
    const model = new Model();
    for (const view of s.state()) model.fromServer(view);
    const refused = new Set<number>();
    let rolledBack = 0;
    let online = true;
    let onlineAt = 0;
    let latencyUntil = Infinity;
    let fresh = 0;
    const freshFeed = () => `https://feeds.example/s${seed}/f${fresh++}.xml`;
    const freshGuid = (kind: string) => `${kind}-${seed}-${fresh++}`;

    // ---- the script's moves ----------------------------------------------------------------------

    const unexpected = (what: string, error: unknown) => {
      const text = isSyncError(error) ? `SyncError ${error.code}: ${error.message}` : error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      violations.push(`${what} failed unexpectedly: ${text}`);
      note(`!! ${what}: ${text}`);
    };

    const liveSubs = () => model.subs.filter((sub) => model.current(sub, 'deleted') !== true);
    const pickSub = (r: Prng): ModelSub | undefined => {
      const live = liveSubs();
      if (live.length && r.chance(0.9)) return r.pick(live);
      return model.subs.length ? r.pick(model.subs) : undefined;
    };
    const handleFor = (sub: ModelSub, r: Prng) => (r.chance(0.7) ? sub.handles[sub.handles.length - 1]! : r.pick(sub.handles));

    const randomChange = (): SubscriptionChange => {
      switch (rng.weighted({ flag: 5, feed: 3, guid: 1.5, combo: 1.5 })) {
        case 'flag':
          return { isSubscribed: rng.chance(0.5) };
        case 'feed':
          return { feedUrl: freshFeed() };
        case 'guid':
          return { guid: freshGuid('g') };
        default:
          return rng.chance(0.5) ? { isSubscribed: rng.chance(0.5), feedUrl: freshFeed() } : { isSubscribed: rng.chance(0.5), guid: freshGuid('g') };
      }
    };

    type Local = { what: string; run: (e: SyncEngine) => Promise<unknown>; record: (value: unknown, maybe: boolean) => void };
    /** The queued changes of a subscription, as the app can see them (for steering clear of known bugs). */
    const queuedFor = async (sub: ModelSub) => {
      for (const handle of [...sub.handles].reverse()) {
        const view = await engine.subscription(handle).catch(() => undefined);
        if (view) return (await engine.pending().catch(() => [])).filter((p) => p.guid === view.guid);
      }
      return [];
    };

    const planLocal = async (kind: 'update' | 'add' | 'remove', allowGuidless = true): Promise<Local | undefined> => {
      if (kind === 'add') {
        const feedUrl = freshFeed();
        const guid = !allowGuidless || rng.chance(0.5) ? freshGuid('a') : undefined;
        return {
          what: `add(${feedUrl}${guid ? `, {guid: ${guid}}` : ''})`,
          run: (e) => e.add(feedUrl, guid === undefined ? undefined : { guid }),
          record: (value, maybe) => {
            const view = value as { guid: string } | undefined;
            model.localAdd(feedUrl, guid, view?.guid ?? guid!, maybe);
          },
        };
      }
      const sub = pickSub(rng);
      if (!sub) return undefined;
      const handle = handleFor(sub, rng);
      const change = kind === 'update' ? randomChange() : {};
      const queued = avoid.size ? await queuedFor(sub) : [];
      if (kind === 'remove') {
        if (avoid.has('remove-unacked-add') && queued.some((c) => c.kind === 'add')) return skip('remove-unacked-add', `remove(${handle})`);
        return { what: `remove(${handle})`, run: (e) => e.remove(handle), record: (_v, maybe) => model.localRemove(sub, maybe) };
      }
      if (avoid.has('edit-unacked-add') && change.feedUrl !== undefined && queued.some((c) => c.kind === 'add')) {
        return skip('edit-unacked-add', `update(${handle}, ${JSON.stringify(change)})`);
      }
      if (avoid.has('rename-unacked-add') && change.guid !== undefined && queued.some((c) => c.kind === 'add')) {
        return skip('rename-unacked-add', `update(${handle}, ${JSON.stringify(change)})`);
      }
      return {
        what: `update(${handle}, ${JSON.stringify(change)})`,
        run: async (e) => {
          const done = await announcedUpdate(e, handle, change);
          return { ...done, foldedBack: done.wrote ? await foldedBack(e, done.view.guid, change) : [] };
        },
        record: (value, maybe) => {
          const done = value as (AnnouncedUpdate & { foldedBack: Field[] }) | undefined;
          // Equal to the engine's local view: nothing written, nothing to send (issue 25).
          if (done && !done.wrote) return note(`update(${handle}, ${JSON.stringify(change)}) changed nothing`);
          model.localUpdate(sub, change, maybe);
          if (done?.foldedBack.length) {
            model.foldedBack(sub, done.foldedBack);
            note(`update(${handle}, ${JSON.stringify(change)}) folded ${done.foldedBack.join(', ')} back to the engine's base`);
          }
          const view = done?.view;
          if (view && ((change.feedUrl && view.feedUrl !== change.feedUrl) || (change.isSubscribed !== undefined && view.isSubscribed !== change.isSubscribed) || (change.guid && view.guid !== change.guid))) {
            violations.push(`update(${handle}, ${JSON.stringify(change)}) resolved with a view that does not show the change: ${JSON.stringify(view)}`);
          }
        },
      };
    };

    const skip = (bug: KnownBug, what: string): undefined => {
      note(`${what} left out (known engine bug: ${bug})`);
      return undefined;
    };

    const localStep = async (kind: 'update' | 'add' | 'remove') => {
      const op = await planLocal(kind);
      if (!op) return;
      try {
        const value = await op.run(engine);
        op.record(value, false);
        result.intents++;
        note(`${op.what} ok`);
      } catch (error) {
        if (isSyncError(error) && (LOCAL_REJECTIONS.has(error.code) || (switched && error.code === 'account-mismatch'))) note(`${op.what} rejected: ${error.code}`);
        else unexpected(op.what, error);
      }
    };

    /** A guid the other device can address this subscription by (it learns server guids by syncing). */
    const foreignHandle = async (sub: ModelSub): Promise<string | undefined> => {
      if (sub.serverNamed || sub.origin !== 'local') return sub.handles[0];
      const view = await engine.subscription(sub.handles[0]!).catch(() => undefined);
      return view && !view.guid.startsWith('local-') ? view.guid : undefined;
    };

    const foreignStep = async (kind: 'patch' | 'add' | 'remove') => {
      if (kind === 'add') {
        const view = s.foreign.add(freshFeed());
        model.foreignAdd(view);
        result.foreign++;
        note(`foreign add ${view.guid} ${view.feed_url}`);
        return;
      }
      const sub = pickSub(rng);
      const guid = sub && (await foreignHandle(sub));
      if (!sub || !guid) return;
      if (kind === 'remove' && avoid.has('deletion-before-first-cursor') && (await readStore(config.dbName)).cursor === undefined) {
        return void skip('deletion-before-first-cursor', `foreign remove ${guid}`);
      }
      try {
        if (kind === 'remove') {
          s.foreign.remove(guid);
          model.foreignRemove(sub);
          note(`foreign remove ${guid}`);
        } else {
          const pick = rng.weighted({ flag: 5, feed: 3, guid: 1 });
          const body = pick === 'flag' ? { is_subscribed: rng.chance(0.5) } : pick === 'feed' ? { new_feed_url: freshFeed() } : { new_guid: freshGuid('fg') };
          s.foreign.patch(guid, body);
          model.foreignPatch(sub, body);
          note(`foreign patch ${guid} ${JSON.stringify(body)}`);
        }
        result.foreign++;
      } catch (error) {
        if (error instanceof ForeignError) note(`foreign ${kind} ${guid} refused: ${error.status}`);
        else throw error;
      }
    };

    /**
     * The pattern that once lost a change (seed 307): an add whose POST fails, then a feed URL change and a guid
     * change queued behind it while the push runs, cut at seeded points.
     */
    const unackedAddStep = async () => {
      const feedUrl = freshFeed();
      const guid = freshGuid('a');
      const failures = rng.int(1, 2);
      s.failNext(failures, 502, { method: 'POST' });
      note(`pattern: ${failures}× 502 on POST, then add and edits behind it`);
      try {
        await engine.add(feedUrl, { guid });
        model.localAdd(feedUrl, guid, guid, false);
        result.intents++;
        note(`add(${feedUrl}, {guid: ${guid}}) ok`);
        const sub = model.byHandle(guid)!;
        for (const change of [{ feedUrl: freshFeed() }, { guid: freshGuid('g') }] as SubscriptionChange[]) {
          if (rng.chance(0.5)) void syncStep();
          // Some virtual time lets the POST's retry through; then a few turns land the edit inside the push's steps.
          await sim.sleep(rng.pick([0, rng.int(1, 30), rng.int(1, 120)]));
          await sim.ticks(rng.int(0, 40));
          const handle = sub.handles[sub.handles.length - 1]!;
          const view = await engine.update(handle, change);
          model.localUpdate(sub, change, false);
          result.intents++;
          note(`update(${handle}, ${JSON.stringify(change)}) ok → ${view.guid}`);
        }
      } catch (error) {
        // While another account holds the store (another tab signed in), local edits are refused as the others are.
        if (isSyncError(error) && (LOCAL_REJECTIONS.has(error.code) || (switched && error.code === 'account-mismatch'))) note(`pattern rejected: ${error.code}`);
        else unexpected('the unacknowledged-add pattern', error);
      }
    };

    const syncStep = async () => {
      try {
        // An app does not wait for ever: during an outage a run may keep going in the background (it is
        // shared by the next sync() call, and the calm phase waits for it).
        const report = await Promise.race([engine.sync(), sim.sleep(SYNC_PATIENCE).then(() => undefined)]);
        if (!report) {
          note(`sync still running after ${SYNC_PATIENCE} ms; moving on`);
          return;
        }
        result.syncs++;
        note(`sync ok pulled ${report.pulled} pushed ${report.pushed} failed ${report.failed} pending ${report.pending}`);
        // While another account holds the store, its cursor is not this server's.
        const found = switched ? [] : await cursorViolations(engine.dbName, s);
        if (found.length) {
          violations.push(...found.map((v) => `after a completed sync: ${v}`));
          note(`!! cursor: ${found.join('; ')}`);
        }
      } catch (error) {
        // A redirect to another origin is the server's (or a middlebox's) refusal, not a network failure.
        if (isSyncError(error) && error.code === 'network' && isRedirectAsNetwork(error)) {
          violations.push(`sync() failed as network after a redirect to another origin (issue 16 #15): ${error.message}`);
        }
        const redirected = isSyncError(error) && error.status !== undefined && error.status >= 300 && error.status < 400;
        if (isSyncError(error) && (SYNC_ERRORS.has(error.code) || redirected || (switched && error.code === 'account-mismatch'))) note(`sync failed: ${error.code} ${traceable(error.message)}`);
        else unexpected('sync()', error);
      }
    };

    const pickMatch = (): FaultMatch | undefined =>
      rng.pick<FaultMatch | undefined>([
        undefined,
        { method: 'GET' },
        { method: 'GET', path: '/subscriptions' },
        { method: 'POST' },
        { method: 'PATCH' },
        { method: 'PATCH' },
        { method: 'DELETE' },
        { method: 'GET', path: /^\/deletions\// },
      ]);

    const faultStep = () => {
      const weights: Record<FaultKind, number> = {
        fail5xx: 4,
        html5xx: 1,
        'rate-limit': 2,
        drop: 2,
        'drop-after': 2,
        'lost-answer': 3,
        'fail-after': 1,
        portal: 1,
        refusal: opts.refusals ? 3 : 0,
        rollback: opts.refusals ? 1 : 0,
      };
      if (avoid.has('portal')) weights.portal = 0;
      const kind = rng.weighted(weights);
      const match = pickMatch();
      const count = rng.int(1, 3);
      const m = match ? JSON.stringify({ ...match, path: match.path?.toString() }) : 'any';
      switch (kind) {
        case 'fail5xx': {
          const status = rng.pick([500, 502, 503, 504, 408]);
          s.failNext(count, status, match);
          note(`fault: ${count}× ${status} on ${m}`);
          break;
        }
        case 'html5xx':
          s.failNext(count, rng.pick([502, 503]), match, { body: HTML, contentType: 'text/html' });
          note(`fault: ${count}× 5xx with an HTML page on ${m}`);
          break;
        case 'rate-limit': {
          const retryAfter = rng.pick([0, 0, 1, '0.2']);
          s.failNext(count, 429, match, { retryAfter });
          note(`fault: ${count}× 429 Retry-After ${retryAfter} on ${m}`);
          break;
        }
        case 'drop':
          s.dropNext(count, match);
          note(`fault: ${count}× dropped connection before handling on ${m}`);
          break;
        case 'drop-after':
          s.dropNext(count, match, { afterHandling: true });
          note(`fault: ${count}× dropped connection after handling on ${m}`);
          break;
        case 'lost-answer':
          s.malformNext(count, match, undefined, { afterHandling: true });
          note(`fault: ${count}× answer lost (cut JSON) after handling on ${m}`);
          break;
        case 'fail-after':
          s.failNext(count, rng.pick([500, 503]), match, { afterHandling: true });
          note(`fault: ${count}× 5xx after handling on ${m}`);
          break;
        case 'portal':
          s.malformNext(1, match, '<html><body>Sign in to the Wi-Fi</body></html>');
          note(`fault: a 200 HTML page instead of the answer, request never handled (captive portal) on ${m}`);
          break;
        case 'refusal': {
          // A refusal is the server's word: 404/410 on DELETE mean "nothing to delete", so those are not lies we tell.
          const status = rng.pick(REFUSALS);
          const methods = (status === 404 || status === 410 ? ['PATCH', 'POST'] : ['PATCH', 'POST', 'DELETE']).filter(
            (m) => m !== 'PATCH' || !avoid.has('refused-rename'),
          );
          const method = rng.pick(methods);
          s.failNext(1, status, { method });
          refused.add(status);
          note(`fault: refusal ${status} on ${method}`);
          break;
        }
        case 'rollback':
          s.deletionOutcome('failure', 1);
          rolledBack++;
          note('fault: the next deletion job fails and rolls back');
          break;
      }
      result.faults++;
    };

    const weatherStep = () => {
      const weather: Weather = rng.chance(0.4)
        ? { ...CALM, foreignNext }
        : { delayBefore: rng.pick([0, 0.1, 0.3]), delayAfter: rng.pick([0, 0.1, 0.3]), maxDelay: rng.pick([50, 150, TIMEOUT + 200]), foreignNext };
      transport.weather = weather;
      note(`weather: ${JSON.stringify(weather)}`);
    };

    const crashStep = async () => {
      result.crashes++;
      const during = rng.weighted({ sync: 3, edit: 1, idle: 1 });
      const dying = engine;
      let edit: { op: Local; outcome: Promise<{ ok: true; value: unknown } | { ok: false; error: unknown }> } | undefined;
      let run: Promise<unknown> | undefined;
      if (during === 'sync') run = dying.sync().catch(() => undefined);
      if (during === 'edit') {
        // Guid-less adds are left out: a cut-off add() never tells the app its placeholder guid.
        const op = await planLocal(rng.pick(['update', 'update', 'add', 'remove'] as const), false);
        if (op) edit = { op, outcome: op.run(dying).then((value) => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error })) };
      }
      // An edit is cut off a few event-loop turns in (mid-transaction, at a point the seed fixes); a sync after some virtual ms.
      if (during === 'edit') await sim.ticks(rng.int(0, 12));
      else await sim.sleep(rng.int(0, 40));
      note(`crash: killing the engine (${during}${edit ? ` ${edit.op.what}` : ''})`);
      await dying.close();
      await run;
      if (edit) {
        const outcome = await edit.outcome;
        if (outcome.ok) {
          edit.op.record(outcome.value, false);
          result.intents++;
          note(`crash: ${edit.op.what} had resolved`);
        } else if (isSyncError(outcome.error) && (outcome.error.code === 'not-found' || outcome.error.code === 'gone')) {
          note(`crash: ${edit.op.what} rejected: ${outcome.error.code}`);
        } else {
          // Cut off: it may or may not have become durable.
          const error = outcome.error;
          edit.op.record(undefined, true);
          note(`crash: ${edit.op.what} was cut off (${isSyncError(error) ? error.code : (error as Error).name})`);
          if (!isSyncError(error) && !avoid.has('close-during-edit')) violations.push(`${edit.op.what} cut off by close() rejected with a ${(error as Error).name}, not a SyncError: ${(error as Error).message}`);
        }
      }
      const found = switched ? [] : await cursorViolations(config.dbName, s);
      if (found.length) violations.push(...found.map((v) => `after a crash: ${v}`));
      engine = open();
      if (!online) engine.setOnline(false);
      note('crash: a new engine opened the same database');
    };

    const hostileStep = async (step: number) => {
      const kind = hr.pick([...hostile]);
      result.faults++;
      if (middleboxFault(kind, { transport, rng: hr, now: sim.now(), timeout: TIMEOUT, serverUrls: opaServerUrls, otherOrigin: other.origin, note })) {
        if (kind === 'redirect') redirectUsed = true;
      } else switch (kind) {
        case 'clock': {
          const ms = clockStep(hr);
          if (hr.chance(0.5)) {
            sim.stepDeviceClock(ms);
            note(`hostile: the device clock steps ${ms > 0 ? '+' : ''}${ms} ms (now ${sim.deviceOffset} ms off)`);
          } else {
            arm(`the device clock steps ${ms > 0 ? '+' : ''}${ms} ms`, async () => sim.stepDeviceClock(ms));
            note(`hostile: the device clock will step ${ms} ms during the next pull`);
          }
          break;
        }
        case 'retry-after': {
          const value = yearLong(hr, sim.now());
          const status = hr.pick([429, 503]);
          s.failNext(hr.int(1, 2), status, pickMatch(), { retryAfter: value });
          retryAfterUsed = true;
          note(`hostile: ${status} with Retry-After ${value.length > 40 ? `${value.slice(0, 12)}… (${value.length} digits)` : value}`);
          break;
        }
        case 'other-tab':
          if (switched || armed.some((a) => a.what.startsWith('another tab'))) break;
          arm('another tab clears the store and signs in to another account', signOutIn);
          note('hostile: another tab will sign out and in to another account during the next pull');
          break;
        case 'dead-server': {
          const rule = deadServer(hr, sim.now());
          transport.proxy.push(rule);
          const edits = hr.int(10, 40);
          note(`hostile: the server refuses connections for ${rule.until! - sim.now()} ms; a burst of ${edits} edits`);
          for (let i = 0; i < edits; i++) await localStep('update');
          break;
        }
        case 'gateway-down':
          violations.push(
            ...(await gatewayDownStep({ transport, rng: hr, now: sim.now, sleep: (ms) => sim.sleep(ms), engine: () => engine, edit: () => localStep('update'), note })),
          );
          break;
      }
      if (switched && switched.signBackAt < 0) switched.signBackAt = step + hr.int(1, 3);
    };

    // ---- the soak families of issues 31 and 33 (families.ts) -------------------------------------

    /** The page's copies on their way (sent as it went away): the calm phase lets them land first. */
    const copiesSent: Promise<unknown>[] = [];
    /** Feeds added in bulk: the server must end with at most one live entry of each. */
    const bulkFeeds = new Set<string>();
    const pageTransport = copies ? createTransport({ serverOrigin: s.origin, otherOrigin: other.origin, rng: rng.fork(7), sim }) : undefined;
    const skipFamily = (family: Family, why: string) => note(`family ${family} skipped: ${why}`);
    /** Another tab on this database: offline (in Node every engine leads), so it only edits, as a follower does. */
    const follower = () => {
      const tab = chaosEngine(scope, s, config);
      tab.setOnline(false);
      return tab;
    };
    /** An app's update() through engine `e`, recorded; `mayFold`: its fold-back (issue 25) is read from pending(). */
    const recordedUpdate = async (e: SyncEngine, sub: ModelSub, handle: string, change: SubscriptionChange, mayFold: boolean, by = ''): Promise<Subscription | undefined> => {
      const what = `${by}update(${handle}, ${JSON.stringify(change)})`;
      try {
        const done = await announcedUpdate(e, handle, change);
        if (!done.wrote) {
          note(`${what} changed nothing`);
          return undefined;
        }
        model.localUpdate(sub, change);
        result.intents++;
        const folded = mayFold ? await foldedBack(e, done.view.guid, change) : [];
        if (folded.length) model.foldedBack(sub, folded);
        note(`${what} ok${folded.length ? `, folded ${folded.join(', ')} back to the engine's base` : ''}`);
        return done.view;
      } catch (error) {
        if (isSyncError(error) && (LOCAL_REJECTIONS.has(error.code) || (switched && error.code === 'account-mismatch'))) note(`${what} rejected: ${error.code}`);
        else unexpected(what, error);
        return undefined;
      }
    };
    const syncFor = async () => {
      const done = await Promise.race([engine.sync().then(() => true, () => true), sim.sleep(SYNC_PATIENCE).then(() => false)]);
      return done;
    };
    /** The subscription a guid the engine knows names in the model. */
    const subOf = async (guid: string): Promise<ModelSub | undefined> => {
      const direct = model.byHandle(guid);
      if (direct) return direct;
      const view = await engine.subscription(guid).catch(() => undefined);
      if (!view) return undefined;
      for (const sub of model.subs) {
        for (const h of sub.handles) if ((await engine.subscription(h).catch(() => undefined))?.guid === view.guid) return sub;
      }
      return undefined;
    };

    /** Issue 31: a follower tab's edit while the leader's request carrying the same subscription is in flight. */
    const followerFamily = async () => {
      const candidates = liveSubs().filter((sub) => !sub.excused && !sub.maybe);
      if (!online || switched || !candidates.length) return skipFamily('follower', online ? 'nothing to edit' : 'offline');
      const sub = fr.pick(candidates);
      const handle = sub.handles[sub.handles.length - 1]!;
      const before = await engine.subscription(handle).catch(() => undefined);
      if (!before || before.deleted !== undefined) return skipFamily('follower', `${handle} is not live here`);
      // The leader's request must land for the follower's edit to matter (a fold-back then loses it): faults queued
      // at the server by earlier steps would refuse it instead.
      s.clearFaults();
      note("family follower: the server's queued faults are cleared (the leader's request is to land)");
      let fired = false;
      let leader = false;
      // A flag change keeps the row's guid and feed URL: the request carrying it names them.
      const view = before;
      const hook = async ({ method, url, body }: OutgoingRequest) => {
        if (fired || !leader || method === 'GET') return;
        const path = decodeURIComponent(url.pathname);
        const items = ((body ?? {}) as { subscriptions?: { feed_url?: string; guid?: string }[] }).subscriptions ?? [];
        const carries = path.endsWith(`/subscriptions/${view.guid}`) || (method === 'POST' && items.some((x) => x.feed_url === view.feedUrl || x.guid === view.guid));
        if (!carries) return;
        fired = true;
        const tab = follower();
        const back = await recordedUpdate(tab, sub, view.guid, { isSubscribed: view.isSubscribed }, false, 'follower: ');
        await tab.close();
        if (back) note(`${ran('follower')} a follower tab set ${view.guid} back to ${view.isSubscribed} while the leader's ${method} ${path} was in flight`);
      };
      // Armed before the edit: the push may start the moment it is stored (the hook waits for the edit's view).
      hooks.push(hook);
      try {
        leader = true;
        if (!(await recordedUpdate(engine, sub, handle, { isSubscribed: !before.isSubscribed }, true))) return skipFamily('follower', 'the leader wrote nothing');
        for (let i = 0; i < 3 && !fired; i++) if (!(await syncFor())) note('sync still running; moving on');
      } finally {
        hooks = hooks.filter((h) => h !== hook);
      }
      if (!fired) skipFamily('follower', `no request carried ${view.guid}`);
    };

    /** Issue 31: an add the server handled whose answer never came, then another device's change of that feed. */
    const lostAnswerFamily = async () => {
      if (!online || switched) return skipFamily('lost-answer', online ? 'another account holds the store' : 'offline');
      const feedUrl = freshFeed();
      const guid = fr.chance(0.5) ? freshGuid('la') : undefined;
      const removes = fr.chance(0.6);
      let sub: ModelSub | undefined;
      const later: (() => void)[] = [];
      const inModel = (fn: () => void) => {
        if (sub) fn();
        else later.push(fn);
      };
      const rule: LostAnswerRule = {
        remaining: 1,
        match: (method, _url, body) => method === 'POST' && (((body ?? {}) as { subscriptions?: { feed_url?: string }[] }).subscriptions ?? []).some((x) => x.feed_url === feedUrl),
        then: async () => {
          const entry = s.state().find((e) => e.feed_url === feedUrl && e.deleted === undefined);
          if (!entry) {
            note(`the answer to the POST of ${feedUrl} was lost; the server holds no live entry of it`);
            return;
          }
          // An add first handed out before any pull completed has no server time to tell the other device's word is
          // later than it (a re-send is the safe side), and a full pull lists no deletions: both limits of the rule.
          const change = removes && cursor ? 'removed' : 'unsubscribed';
          if (change === 'removed') s.foreign.remove(entry.guid);
          else s.foreign.patch(entry.guid, { is_subscribed: false });
          result.foreign++;
          inModel(() => {
            if (cursor) model.landed(sub!);
            if (change === 'removed') model.foreignRemove(sub!);
            else model.foreignPatch(sub!, { is_subscribed: false });
          });
          note(`${ran('lost-answer')} the server handled the POST of ${feedUrl} (${entry.guid}), its answer was lost, and another device ${change} it${cursor ? '' : ' (no pull had completed: either may stand)'}`);
        },
      };
      // Read before the add: the add may be handed out the moment it is stored.
      const cursor = (await readStore(config.dbName)).cursor !== undefined;
      transport.lose.push(rule);
      try {
        const view = await engine.add(feedUrl, guid === undefined ? undefined : { guid });
        sub = model.localAdd(feedUrl, guid, view.guid);
        result.intents++;
        note(`add(${feedUrl}${guid ? `, {guid: ${guid}}` : ''}) ok`);
        for (const fn of later) fn();
        // Now and then the page goes away right after the lost answer, before the retry's pull (its copy still holds the add).
        const leave = copies && fr.chance(0.5);
        if (leave) for (let i = 0; i < 60 && rule.remaining; i++) await sim.sleep(1);
        if (leave && !rule.remaining) {
          if (avoid.has('copy-resends-unsettled-add')) skip('copy-resends-unsettled-add', 'the page going away right after the lost answer');
          else await pageGoesAway(' right after the lost answer');
        }
        for (let i = 0; i < 3 && rule.remaining; i++) if (!(await syncFor())) note('sync still running; moving on');
      } catch (error) {
        if (isSyncError(error) && LOCAL_REJECTIONS.has(error.code)) note(`add(${feedUrl}) rejected: ${error.code}`);
        else unexpected(`add(${feedUrl})`, error);
      } finally {
        transport.lose = transport.lose.filter((r) => r !== rule);
      }
      if (rule.remaining) skipFamily('lost-answer', `no POST of ${feedUrl} was answered`);
    };

    /** Issue 31: the page's last copy sent as it goes away, maybe with the worker's own request in flight; then the next start. */
    const lastCopyFamily = async () => {
      if (!online || switched || !pageTransport) return skipFamily('last-copy', online ? 'another account holds the store' : 'offline');
      // Edits made offline wait in the queue; back online, the worker starts sending them.
      engine.setOnline(false);
      for (let i = fr.int(1, 3); i > 0; i--) await localStep(fr.pick(['update', 'update', 'add', 'remove'] as const));
      engine.setOnline(true);
      const run = fr.chance(0.6) ? engine.sync().catch(() => undefined) : undefined;
      await sim.sleep(fr.pick([0, 0, fr.int(1, 5), fr.int(1, 40)]));
      const copy = await pageGoesAway('', run);
      // The app edits at once: a change the copy carried, taken back before the new engine sent anything.
      const patched = copy.flatMap((r) => (r.method === 'PATCH' ? [decodeURIComponent(r.path.replace(/^.*subscriptions\//, ''))] : []));
      if (!patched.length || fr.chance(0.3)) return;
      if (avoid.has('copy-then-fold-back')) return void skip('copy-then-fold-back', 'the next start taking back a change the copy carried');
      const guid = fr.pick(patched);
      const sub = await subOf(guid);
      const now = sub && (await engine.subscription(guid).catch(() => undefined));
      if (!sub || !now || now.deleted !== undefined) return;
      await recordedUpdate(engine, sub, guid, { isSubscribed: !now.isSubscribed }, true, 'the next start: ');
    };

    /** Issue 33: many feeds at once (`addMany`, or an OPML import), offline or online, maybe with 413s on large POSTs. */
    const bulkFamily = async () => {
      if (switched) return skipFamily('bulk', 'another account holds the store');
      const n = fr.pick([3, 12, 40, 120, 250]);
      const fresh = Array.from({ length: n }, () => freshFeed());
      const views = await engine.subscriptions({ includeDeleted: true });
      const known = views.filter((v) => v.isSubscribed && v.deleted === undefined).map((v) => v.feedUrl);
      const list = bulkList(fr, fresh, known);
      const offline = online && fr.chance(0.5);
      if (offline) engine.setOnline(false);
      if (fr.chance(0.4)) {
        const limit = fr.int(2, 60);
        transport.proxy.push(tooLarge(limit, sim.now() + fr.int(2_000, 20_000)));
        note(`bulk: POSTs of more than ${limit} feeds get 413 for a while`);
      }
      const opml = fr.chance(0.4);
      let report: AddManyReport;
      try {
        if (opml) ensureDomParser();
        report = opml ? await importOpml(engine, opmlOf(fr, list)) : await engine.addMany(list);
      } catch (error) {
        if (offline) engine.setOnline(true);
        if (isSyncError(error) && LOCAL_REJECTIONS.has(error.code)) return note(`bulk rejected: ${error.code}`);
        return unexpected(opml ? 'importOpml' : 'addMany', error);
      }
      const after = await engine.subscriptions();
      const byFeed = new Map(after.map((v) => [v.feedUrl, v]));
      const before = new Map(views.filter((v) => v.deleted === undefined).map((v) => [v.feedUrl, v]));
      for (const url of report.added) {
        bulkFeeds.add(url);
        const was = before.get(url);
        const sub = was && (await subOf(was.guid));
        if (was && sub) model.localUpdate(sub, { isSubscribed: true });
        else if (byFeed.has(url)) model.localAdd(url, undefined, byFeed.get(url)!.guid);
        else violations.push(`bulk: ${url} was reported added, but the store shows no subscription of it`);
        result.intents++;
      }
      note(checkBulkReport(report, { fresh, known, opml, entries: list.length, offline }, violations));
      if (offline) {
        await sim.sleep(fr.int(0, 50));
        engine.setOnline(true);
        note('online again');
      }
      if (fr.chance(0.5) && !(await syncFor())) note('sync still running; moving on');
    };

    /** The page goes away: it sends the copy it holds (nobody reads the answers), the worker dies with it, the next start opens. */
    const pageGoesAway = async (when: string, run?: Promise<unknown>): Promise<LastChanceRequest[]> => {
      const copy = lastCopy;
      if (copy.length) note(`${ran('last-copy')} the page goes away${when} and sends its copy${run ? ' while the worker syncs' : ''}: ${describeCopy(copy)}`);
      else note(`family last-copy (empty copy): the page goes away${when} with nothing to send${run ? ' while the worker syncs' : ''}`);
      copiesSent.push(sendCopy(copy, s.url, { type: 'bearer', token: TOKEN }, pageTransport!.fetch));
      result.crashes++;
      const dying = engine;
      await dying.close();
      await run;
      if (swr.chance(0.5)) {
        const ms = swr.int(0, 3000);
        note(`the service worker's sync event: its engine runs ${ms} ms`);
        const left = await serviceWorkerEvent(() => chaosEngine(scope, s, config), (t) => sim.sleep(t), ms);
        note(`the service worker's engine stops: ${left}`);
      }
      engine = open();
      note('the next start: a new engine opened the same database');
      return copy;
    };

    const familyStep = async (family: Family) => {
      try {
        if (family === 'follower') await followerFamily();
        if (family === 'lost-answer') await lostAnswerFamily();
        if (family === 'last-copy') await lastCopyFamily();
        if (family === 'bulk') await bulkFamily();
      } catch (error) {
        // Another tab may sign in to another account during a pull the family started: its reads are refused then.
        if (switched && isSyncError(error) && error.code === 'account-mismatch') note(`family ${family} cut short: another account holds the store`);
        else unexpected(`family ${family}`, error);
      }
    };

    // ---- the script ---------------------------------------------------------------------------------

    const weights = {
      update: 22,
      add: 7,
      remove: 5,
      'foreign-patch': 10,
      'foreign-add': 3,
      'foreign-remove': 3,
      sync: 12,
      wait: 8,
      fault: 14,
      weather: 4,
      latency: 3,
      offline: 2,
      crash: opts.crashes ? 4 : 0,
      hostile: hostile.size ? 7 : 0,
    };
    // Every seed covers the once-lost-change pattern at least once, at a step the seed picks.
    const patternAt = rng.int(0, Math.max(0, opts.steps - 1));
    for (let step = 0; step < opts.steps; step++) {
      if (step === patternAt) {
        phase = `#${step}: unacknowledged add pattern`;
        await unackedAddStep();
      }
      for (const family of familyAt.get(step) ?? []) {
        phase = `#${step}: family ${family}`;
        await familyStep(family);
      }
      if (step >= latencyUntil) {
        transport.latency = 0;
        latencyUntil = Infinity;
        note('server latency back to 0 ms');
      }
      if (!online && step >= onlineAt) {
        engine.setOnline(true);
        online = true;
        note('online');
      }
      const move = rng.weighted(weights);
      phase = `#${step}: ${move}`;
      switch (move) {
        case 'update':
        case 'add':
        case 'remove':
          await localStep(move);
          break;
        case 'foreign-patch':
          await foreignStep('patch');
          break;
        case 'foreign-add':
          await foreignStep('add');
          break;
        case 'foreign-remove':
          await foreignStep('remove');
          break;
        case 'sync':
          await syncStep();
          break;
        case 'wait': {
          const ms = rng.int(1, 60);
          await sim.sleep(ms);
          note(`wait ${ms} ms`);
          break;
        }
        case 'fault':
          faultStep();
          break;
        case 'weather':
          weatherStep();
          break;
        case 'latency': {
          const ms = rng.pick([0, 0, 20, 100, TIMEOUT + 100]);
          transport.latency = ms;
          // An outage of timeouts lasts a few steps, not the rest of the script.
          latencyUntil = ms > TIMEOUT ? step + rng.int(1, 3) : Infinity;
          note(`server latency ${ms} ms${ms > TIMEOUT ? ' (above the engine timeout, for a few steps)' : ''}`);
          break;
        }
        case 'offline':
          if (online) {
            engine.setOnline(false);
            online = false;
            onlineAt = step + rng.int(1, 5);
            note('offline');
          }
          break;
        case 'crash':
          await crashStep();
          break;
        case 'hostile':
          await hostileStep(step);
          break;
      }
      if (switched && switched.signBackAt < 0) switched.signBackAt = step + hr.int(1, 3);
      if (hostile.size) await storeCheck(`after step ${step}`);
      if (switched && step >= switched.signBackAt) await signBack('after a few steps');
    }

    // ---- faults stop; the engine settles -------------------------------------------------------------

    phase = 'calm (settling)';
    note('calm: faults cleared, latency 0, online');
    s.clearFaults();
    transport.latency = 0;
    s.deletionOutcome('success');
    transport.weather = { ...CALM, foreignNext };
    transport.proxy = [];
    transport.rewrite = [];
    transport.lose = [];
    hooks = [];
    armed = [];
    await midPull?.catch(() => undefined);
    await Promise.all(copiesSent);
    if (switched) await signBack('calm');
    engine.setOnline(true);
    // A server that asked to wait a year gets at most a day (the cap issue 16 #9 asks for): simulated time is cheap.
    const patience = retryAfterUsed ? 26 * 3_600_000 : 20_000;
    const maxPause = retryAfterUsed ? 600_000 : 15;
    await settleEngine(engine, patience, sim, maxPause);
    if (hostile.size) await storeCheck('after settling');

    const judgeFailed = (change: FailedChange, sub: ModelSub | undefined): string | undefined => {
      // The change's own guid is the server's for a local add the placeholder no longer names.
      const entry = [...(sub?.handles ?? []), change.guid].map((h) => s.entry(h)).find((x) => x !== undefined);
      if ((change.reason.code === 'gone' || change.reason.code === 'not-found') && entry?.deleted !== undefined) return undefined;
      if (change.reason.status !== undefined && refused.has(change.reason.status)) return undefined;
      // A redirect to another origin is a refusal (issue 16 #15): what it refused may sit in failed().
      if (redirectUsed && change.reason.status !== undefined && change.reason.status >= 300 && change.reason.status < 400) return undefined;
      if (rolledBack && change.kind === 'remove' && /rolled back/.test(change.reason.message)) return undefined;
      // An edit behind an add that was refused (by a refusal, or a redirect) has no server guid to go to.
      if ((opts.refusals || redirectUsed) && change.reason.code === 'not-found' && /no server guid/.test(change.reason.message)) return undefined;
      return `nothing refused it: the server ${entry ? `has it ${entry.deleted ? 'deleted' : 'live'}` : 'does not know it'}`;
    };

    if (opts.refusals || redirectUsed) {
      // The app deals with what was refused: retry some, discard the rest (everything, in the last round).
      for (let round = 0; round < 3; round++) {
        const failed = await engine.failed();
        if (!failed.length) break;
        const guids = new Map<string, ModelSub>();
        for (const sub of model.subs) {
          for (const h of [...sub.handles].reverse()) {
            const view = await engine.subscription(h);
            if (view) {
              guids.set(view.guid, sub);
              break;
            }
          }
        }
        for (const change of failed) {
          const sub = guids.get(change.guid) ?? model.byHandle(change.guid);
          const why = judgeFailed(change, sub);
          if (why) violations.push(`failed: ${change.kind} of ${change.guid} (${change.reason.code}: ${change.reason.message}) — ${why}`);
          if (round < 2 && rng.chance(0.5)) {
            await engine.retry(change.id);
            if (sub) model.retried(sub, change);
            note(`retry ${change.kind} ${change.guid} (${change.reason.status ?? change.reason.code})`);
          } else {
            await engine.discard(change.id);
            if (sub) model.excuse(sub);
            note(`discard ${change.kind} ${change.guid} (${change.reason.status ?? change.reason.code})`);
          }
        }
        await settleEngine(engine, patience, sim, maxPause);
      }
    }
    result.failedKept = (await engine.failed()).length;

    phase = 'checking invariants';
    note('check: invariants');
    try {
      await checkInvariants({ engine, server: s, model, transport, other, judgeFailed, sleep: sim.sleep });
    } catch (error) {
      if (error instanceof InvariantViolation) violations.push(...error.violations);
      else throw error;
    }

    // Nothing doubled by a bulk add: one live entry per feed at most.
    for (const url of bulkFeeds) {
      const live = s.state().filter((e) => e.feed_url === url && e.deleted === undefined);
      if (live.length > 1) violations.push(`bulk: ${live.length} live entries of ${url} on the server: ${live.map((e) => e.guid).join(', ')}`);
    }

    if (hostile.size) {
      violations.push(...overlapViolations(transport));
      violations.push(...spinViolations(transport.audit, appActions, config.retry));
      if (switchedEver) note('check: the other account never mixed into this store');
    }

    // What the store holds survives a restart as it is.
    phase = 'restart check';
    const before = localPicture(await engine.subscriptions());
    const cursor = (await readStore(config.dbName)).cursor;
    await engine.close();
    const reopened = open();
    const after = localPicture(await reopened.subscriptions());
    if (JSON.stringify(before) !== JSON.stringify(after)) violations.push(`restart: the local view changed on reopening: ${before.length} → ${after.length} rows`);
    if ((await readStore(config.dbName)).cursor !== cursor) violations.push('restart: the cursor changed on reopening');
    await reopened.close();

    result.requests = s.log().length;
    note(`end: ${result.requests} requests, server state ${JSON.stringify(s.state().map((e) => [e.guid, e.feed_url, e.is_subscribed, e.deleted ?? null]))}`);
    result.transport = { ...transport.stats, busiestSecond: sim.busiestSecond };
  };
  const watchdog = stallWatchdog(() => trace.length, opts.watchdog, () => `hung: no step for ${opts.watchdog} ms, in ${phase}`);
  try {
    await Promise.race([body(), watchdog.hung, runaway]);
  } catch (error) {
    if (error instanceof ScenarioFailure) throw error;
    if (error instanceof RunawayError) violations.push(`${error.message} in ${phase}`);
    else violations.push(`the scenario could not finish: ${error instanceof Error ? error.stack ?? error.message : String(error)}`);
    if (diagnose) violations.push(`when it stopped: ${await diagnose().catch((e: unknown) => String(e))}`);
  } finally {
    watchdog.stop();
    result.ms = Date.now() - wallStart;
    if (violations.length && server) {
      trace.push('--- server log (last 25) ---');
      for (const r of server.log().slice(-(Number(process.env.CHAOS_LOG) || 25))) trace.push(`${r.method} ${r.path}${Object.keys(r.query).length ? '?' + new URLSearchParams(r.query) : ''} → ${r.status}${r.fault ? ` (${r.fault})` : ''} ${r.body ? JSON.stringify(r.body) : ''}`);
    }
    // A hung engine may never close: do not hang the soak with it.
    await Promise.race([scope.close(), sleep(3000)]);
    sim.stop();
  }
  if (violations.length) throw new ScenarioFailure(seed, violations.map((v) => `  - ${v}`).join('\n'), trace);
  return result;
}
