// The randomised chaos scenario against the gPodder reference server (mygpo or opodsync dialect, v2 or
// Nextcloud paths), in simulated time like the OPA one (sim.ts): local adds, toggles, feed URL moves and
// removes; another device's uploads; 5xx, 429, dropped connections, lost answers, whole-upload refusals;
// crashes and offline spells. Then the faults stop, the engine settles, and the same invariants are checked
// in gPodder's terms: converged, nothing lost or doubled per URL, nothing pending, credentials kept home.
// The hostile families of issue 16 (hostile.ts) join as `hostile` moves, with their invariants checked as the
// script goes (no script URL in the store, nothing of another account in it or sent to it, no change in two
// requests at once, no spin).
import { isSyncError } from '../../src/errors.ts';
import { importOpml } from '../../src/opml-methods.ts';
import type { LastChanceRequest } from '../../src/protocol.ts';
import type { AddManyReport, EpisodeState, PendingChange } from '../../src/types.ts';
import { OPEN_ENGINE_BUGS, type KnownBug } from './scenario.ts';
import { bulkList, checkBulkReport, describeCopy, drawFamilies, ensureDomParser, FAMILIES, opmlOf, serviceWorkerEvent, ran, sendCopy, tooLarge, type Family } from './families.ts';
import type { SyncEngine } from '../../worker/index.ts';
import { announcedUpdate, type AnnouncedUpdate } from './announced.ts';
import { createSyncEngine } from '../../worker/index.ts';
import { startGpodderServer } from '../server/gpodder/server.ts';
import type { EpisodeActionView, GpodderDialect, GpodderServer, ListTarget } from '../server/gpodder/types.ts';
import { chaosDbName, otherOrigin, readStore, Scope, settleEngine, sleep } from './fixtures.ts';
import { convergedViolations, feedsOf, lostViolations, playFields, strayViolations, type EpisodeStory, type ModelChange } from './episode-model.ts';
import { accountMixViolations, overlapViolations, spinViolations, unsafeUrlViolations } from './invariants.ts';
import {
  ALL_HOSTILE,
  episodeCap,
  episodeRenames,
  middleboxFault,
  clockStep,
  deadServer,
  gatewayDownStep,
  gpodderServerUrls,
  uploadTooLarge,
  yearLong,
  type HostileFault,
  type SentEpisode,
} from './hostile.ts';
import { prng } from './prng.ts';
import { RECONCILE_INTERVAL } from '../../worker/episodes/pull.ts';
import { createSimulation } from './sim.ts';
import { CALM, createTransport, isRedirectAsNetwork, RunawayError, type LostAnswerRule, type OutgoingRequest } from './transport.ts';
import { stallWatchdog } from './watchdog.ts';

/** What a gPodder scenario did. */
export interface GpodderScenarioResult {
  seed: number;
  dialect: GpodderDialect;
  protocol: 'gpodder' | 'nextcloud';
  /** What the server answers of the actions it stamped ahead of its clock (mygpo's /api/2 only). */
  ahead: 'hidden' | 'listed';
  intents: number;
  foreign: number;
  /** Listening-state calls this device made, and play actions another device uploaded. */
  episodeCalls: number;
  foreignActions: number;
  crashes: number;
  faults: number;
  requests: number;
  trace: string[];
}

/** One URL's story: who last wanted what. */
interface UrlIntent {
  /** The last durable local intent (subscribed or not), and whether a crash left it uncertain. */
  local?: { value: boolean; maybe: boolean; at: number };
  foreign?: { value: boolean; at: number };
  /** The last step another device subscribed it at (an add, or a play that subscribed a feed with no row). */
  foreignAddedAt?: number;
  /** Every value another device gave it (a move carries whichever the engine had pulled when it was sent). */
  foreignValues?: boolean[];
  initial?: boolean;
  /** A change of it the server refused (and the app then discarded). */
  refused?: boolean;
  /** It is where this device moved another URL: a move keeps the flag, so another device's change of the old URL counts. */
  movedFrom?: string;
  /**
   * Another device changed it while the server's clock was behind: stamped before the engine's cursor, so no
   * `since`-based pull sees it (a protocol limit when the regression is too small to detect; see the README).
   */
  pastStamped?: boolean;
  /**
   * The lost-answer family: this device's subscribe (`local`) reached the server and its answer was lost, then
   * another device's remove (`foreign`). While both are still the last words, the remove must stand.
   */
  landed?: { local: UrlIntent['local']; foreign: UrlIntent['foreign'] };
}

const USER = 'alice';
const PASSWORD = 'alice-password';
/** Another account on the same server: its feeds are on bob.example, and none of them may reach alice's store. */
const OTHER_USER = 'bob';
const OTHER_PASSWORD = 'bob-password';
const isBobs = (url: string) => url.includes('bob.example');
const DEVICE = 'chaos-device';
const TIMEOUT = 600;

/** A gPodder scenario that broke an invariant, with its trace. */
export class GpodderScenarioFailure extends Error {
  override readonly name = 'GpodderScenarioFailure';
  constructor(
    readonly seed: number,
    readonly reason: string,
    readonly trace: string[],
  ) {
    super(`gpodder chaos seed ${seed} failed (replay: npm run chaos -- --protocol gpodder --seed ${seed})\n${reason}\n--- steps ---\n${trace.join('\n')}`);
  }
}

/** Run one seeded gPodder scenario. */
export async function runGpodderScenario(
  seed: number,
  steps = 40,
  faults: readonly HostileFault[] = ALL_HOSTILE,
  families: readonly Family[] = FAMILIES,
  avoidList: readonly KnownBug[] = OPEN_ENGINE_BUGS,
): Promise<GpodderScenarioResult> {
  const avoid = new Set(avoidList);
  const rng = prng(seed * 7919 + 17);
  const engineRng = rng.fork(2);
  const sim = createSimulation(() => engineRng.next());
  const start = sim.now();
  const scope = new Scope();
  const trace: string[] = [];
  const note = (line: string) => trace.push(`${String(sim.now() - start).padStart(5)}ms ${line}`);
  const violations: string[] = [];
  const dialect = rng.pick<GpodderDialect>(['mygpo', 'opodsync']);
  const protocol = rng.pick(['gpodder', 'nextcloud'] as const);
  // What mygpo's /api/2 answers of actions stamped ahead of its clock after a step back: hidden (as its source
  // bounds answers by its "now"), or listed in every answer from before their stamp (an action log without that
  // bound). Drawn from a stream of its own: the draws above and the rest of the scenario stay as they were.
  const ahead = rng.fork(5).pick(['hidden', 'listed'] as const);
  const result: GpodderScenarioResult = { seed, dialect, protocol, ahead, intents: 0, foreign: 0, episodeCalls: 0, foreignActions: 0, crashes: 0, faults: 0, requests: 0, trace };
  const urls = new Map<string, UrlIntent>();
  const intent = (url: string) => urls.get(url) ?? (urls.set(url, {}).get(url)!);
  /** Listening state: each episode's changes, by feed and guid (episode-model.ts). */
  const episodes = new Map<string, EpisodeStory>();
  let step = 0;
  let fresh = 0;
  const freshFeed = () => `https://feeds.example/g${seed}/f${fresh++}.xml`;
  // Where a feed moves: a host of its own, so the made-up episodes of the new URL (the catalog's, on the feed's
  // host) share no enclosure URL with the moved ones. A moved feed is the same feed: mygpo, which names an
  // episode by its URL within the podcast, would otherwise read a moved episode as the new URL's own.
  const movedFeed = () => `https://moved-${fresh++}.example/g${seed}/feed.xml`;
  let refusals = false;
  let server: GpodderServer | undefined;

  let stopRunaway: (message: string) => void = () => undefined;
  const runaway = new Promise<never>((_, reject) => {
    stopRunaway = (message) => reject(new RunawayError(message));
  });
  runaway.catch(() => undefined);
  const body = async () => {
    // The protocol's clock has whole seconds: each reading is a new second, so no two events share one (the
    // same-second gap of mygpo's exclusive `since` is a protocol limit the README states, not an engine bug).
    const hostile = new Set(faults);
    const hr = rng.fork(3);
    /** How far the server's clock was set back (timestamp-regress), ms. */
    let serverSkew = 0;
    const s = await startGpodderServer({
      port: 0,
      randomSeed: 0x9bd,
      dialect,
      ahead,
      users: { [USER]: PASSWORD, [OTHER_USER]: OTHER_PASSWORD },
      time: { ...sim.serverTime, now: () => start + (sim.serverTime.now() - start) * 1000 + serverSkew },
    });
    server = s;
    scope.defer(() => s.close());
    const other = await otherOrigin(scope);
    const transport = createTransport({ serverOrigin: s.origin, otherOrigin: other.origin, rng: rng.fork(1), sim });
    transport.onRunaway = stopRunaway;
    sim.onRunaway = stopRunaway;
    // The engine's list: under mygpo the device's own (v2 paths) or the user's (Nextcloud paths).
    const mine: ListTarget = dialect === 'mygpo' && protocol === 'gpodder' ? { device: DEVICE } : {};
    if (dialect === 'mygpo') s.registerDevice(DEVICE);
    for (const url of s.seed(rng.int(2, 8))) intent(url).initial = true;
    const bobs: ListTarget = { user: OTHER_USER, ...mine };
    if (dialect === 'mygpo') s.registerDevice(DEVICE, undefined, OTHER_USER);
    s.foreign.add([0, 1, 2].map((i) => `https://bob.example/g${seed}/${i}.xml`), bobs);
    const options = {
      protocol,
      baseUrl: s.url,
      auth: { type: 'basic' as const, username: USER, password: PASSWORD },
      device: DEVICE,
      dbName: chaosDbName(`gpodder-chaos-${seed}`),
      pullInterval: 0,
      pushDelay: rng.pick([0, 5, 25]),
      timeout: TIMEOUT,
      retry: { baseDelay: 10, maxDelay: 1000 },
      fetch: transport.fetch,
      clock: sim.clock,
    };
    note(`setup: ${dialect} server${dialect === 'mygpo' ? ` (${ahead} ahead of its clock)` : ''}, ${protocol} paths, ${urls.size} URLs`);
    // The soak families this seed runs (families.ts), from a stream of their own.
    const fr = rng.fork(6);
    /** The service worker's events after the page goes away: a stream of its own, so no other draw shifts. */
    const swr = rng.fork(11);
    const familyAt = drawFamilies(fr, steps);
    for (const [at, list] of familyAt) familyAt.set(at, list.filter((f) => families.includes(f)));
    const drawn = [...familyAt.values()].flat();
    if (drawn.length) note(`families: ${[...familyAt].filter(([, l]) => l.length).map(([at, l]) => `${l.join(', ')} at step ${at}`).join('; ')}`);
    /** The page listens for the last copy (only in seeds that send one: listening costs each edit a build). */
    const copies = drawn.includes('last-copy');
    /** The copy the page holds now (the open engine's last one told). */
    let lastCopy: LastChanceRequest[] = [];
    /** When the app acted (virtual ms): what the no-spin bound allows beyond the backoff schedule. */
    const appActions: number[] = [];
    const acting = ['sync', 'add', 'addMany', 'update', 'remove', 'retry', 'discard', 'setOnline', 'setAuth', 'clear'] as const;
    const open = (): SyncEngine => {
      const e = createSyncEngine(options);
      scope.defer(() => e.close());
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
    let retryAfterUsed = false;
    let redirectUsed = false;
    /** An upload-413 proxy was armed: a move (two URLs) past a limit of one cannot be split, so it is refused. */
    let tooLargeUsed = false;
    /**
     * The full reconciles the episode-cap proxy answered past the cap: when (simulated ms), and in which life of
     * the engine's record of it (a crash, a cleared store or another account may rightly ask again).
     */
    const capped: { at: number; life: number }[] = [];
    let capArmed = false;
    let life = 0;
    /** An episode upload answer refused a media URL with `""` (episode-renames): the episode keeps an error. */
    let renameRefused = false;
    /** Media URLs an upload answer rewrote to a new http URL: where the server's log stood then, and the life. */
    const rewritten: { from: string; episodes: SentEpisode[]; logged: number; life: number }[] = [];
    /** The server's clock went back (timestamp-regress, step-removes): mygpo's listings may hide what it stamped since. */
    let clockWentBack = false;
    /** Another tab signed in to bob (other-tab) or this one's credentials are bob's (set-auth), until a step. */
    let switched: { kind: 'other-tab' | 'set-auth'; backAt: number } | undefined;
    let armed: { what: string; run: () => Promise<void> }[] = [];
    /** The work a pull is running for the script (calm waits for it before it switches back). */
    let midPull: Promise<void> | undefined;
    /** Work to do before a request is forwarded (the follower family's edit). */
    let hooks: ((request: OutgoingRequest) => Promise<void>)[] = [];
    transport.before = async (request) => {
      for (const hook of [...hooks]) await hook(request);
      const { method, url } = request;
      if (method !== 'GET' || !/subscriptions/.test(url.pathname) || !armed.length) return;
      const now = armed;
      armed = [];
      const work = (async () => {
        for (const a of now) {
          note(`mid-pull: ${a.what}`);
          await a.run();
        }
      })();
      midPull = work;
      await work;
    };
    const seenViolations = new Set<string>();
    const storeCheck = async (when: string) => {
      const snapshot = await readStore(options.dbName);
      const found = [...unsafeUrlViolations(snapshot), ...accountMixViolations(snapshot, (url) => (isBobs(url) ? OTHER_USER : USER))];
      for (const v of found) {
        if (seenViolations.has(v)) continue;
        seenViolations.add(v);
        violations.push(`${v} (${when})`);
        note(`!! ${v}`);
      }
    };
    /** A clear wipes the queue: what this device wanted may never reach the server. */
    const localMaybe = () => {
      for (const story of urls.values()) if (story.local) story.local.maybe = true;
      for (const story of episodes.values()) for (const c of story.changes) if (c.source === 'local') c.maybe = true;
    };
    const bobTab = () => {
      const tab = createSyncEngine({ ...options, auth: { type: 'basic', username: OTHER_USER, password: OTHER_PASSWORD } });
      scope.defer(() => tab.close());
      // A tab that is not online starts no run of its own: it only does what it is told here.
      tab.setOnline(false);
      return tab;
    };
    /** The other tab's sign-in under way: switching back waits for it (the two never interleave). */
    let signingIn: Promise<void> | undefined;
    const signOutIn = () => (signingIn = signOutInNow().finally(() => (signingIn = undefined)));
    const signOutInNow = async () => {
      const tab = bobTab();
      // From here the store may be the other account's (its sync binds it before this step ends): edits are refused.
      switched = { kind: 'other-tab', backAt: -1 };
      await tab.clear();
      localMaybe();
      life++;
      tab.setOnline(true);
      try {
        await tab.sync();
        note('other tab: cleared the store and synced the other account');
      } catch (error) {
        note(`other tab: cleared the store; its sync as the other account failed: ${isSyncError(error) ? error.code : String(error)}`);
      }
      await tab.close();
      switched = { kind: 'other-tab', backAt: -1 };
    };
    const switchAuth = async () => {
      try {
        await engine.setAuth({ type: 'basic', username: OTHER_USER, password: OTHER_PASSWORD });
        switched = { kind: 'set-auth', backAt: -1 };
        life++;
        note('setAuth: the credentials are the other account\'s now');
      } catch (error) {
        note(`setAuth to the other account refused: ${isSyncError(error) ? error.code : String(error)}`);
      }
    };
    const switchBack = async (why: string) => {
      await signingIn;
      if (!switched) return;
      await storeCheck(`before switching back (${why})`);
      if (switched.kind === 'other-tab') {
        const tab = bobTab();
        await tab.clear();
        await tab.close();
        localMaybe();
        life++;
        appActions.push(sim.now());
        note(`other tab: cleared the store again (${why})`);
      } else {
        await engine.setAuth(options.auth).catch((error: unknown) => note(`setAuth back failed: ${String(error)}`));
        life++;
        note(`setAuth: back to this account (${why})`);
      }
      switched = undefined;
    };
    /**
     * The server's clock goes back (an hour or a day: more than a pull's gap, so the engine sees it), another
     * device removes feeds this device subscribes, and the app syncs. Once that sync read the full listing, a
     * removed feed with no pending change here is not subscribed here: the listing is the server's word, whatever
     * the stamps stored from before the step say. (A feed the listing may hide is said again: a pending add.)
     */
    const stepThenRemoves = async () => {
      const back = hr.pick([3600, 86_400]) * 1000;
      // A step before this one may leave the engine's hidden stretch reaching further back (README).
      const steppedBefore = clockWentBack;
      serverSkew -= back;
      clockWentBack = true;
      // Not a URL this device moved away from: the engine resolves it to where it moved (another subscription).
      const candidates = s.subscribed(mine).filter((url) => urls.has(url) && !isBobs(url) && !movedAway.has(url));
      const gone = new Set<string>();
      for (let n = hr.int(1, 3); n > 0 && candidates.length; n--) gone.add(candidates.splice(hr.int(0, candidates.length - 1), 1)[0]!);
      note(`hostile: the server's clock goes back ${back / 1000} s; another device removes ${[...gone].join(', ') || 'nothing'}`);
      for (const url of gone) {
        s.foreign.remove([url]);
        intent(url).foreign = { value: false, at: step };
        (intent(url).foreignValues ??= []).push(false);
        result.foreign++;
      }
      if (!gone.size || switched) return;
      const names = (c: PendingChange) => [c.guid, c.feedUrl, c.change?.feedUrl];
      // A change queued before the sync goes up in its push, after the listing: the server's last word then.
      const queued = new Set((await engine.pending()).flatMap(names));
      const logged = s.log().length;
      // The listing's time is no earlier than this (the server's clock in seconds, after the step).
      const stepTime = s.timestamp();
      // The time of the answer that gave the engine its word on each feed (the server's clock, in seconds).
      const word = new Map<string, number>();
      for (const url of gone) {
        const changed = (await engine.subscription(url))?.subscriptionChanged;
        if (changed !== undefined) word.set(url, Date.parse(changed) / 1000);
      }
      const report = await Promise.race([engine.sync().catch((error: unknown) => error), sim.sleep(2500).then(() => 'still running')]);
      note(`sync: ${isSyncError(report) ? `failed ${report.code}` : typeof report === 'string' ? report : 'ok'}`);
      const during = s.log().slice(logged);
      const listing = during.findIndex((r) => r.method === 'GET' && /subscriptions/.test(r.path) && r.query.since === '0' && r.status === 200);
      // Nothing to check when the sync did not complete, read no full listing, or another account took the store.
      if (isSyncError(report) || typeof report === 'string' || listing < 0 || switched) return;
      // Adds this sync uploaded after the listing: a push carries every queued change, so a feed said again
      // goes up in the same sync and is no longer pending when it ends. The engine says a left-out feed again
      // only when its word on it came in an answer later than the listing's time (gPodder seed 504: a full
      // listing read just before the step; mygpo then netted the older subscribe and the remove to nothing),
      // or when an earlier step's hidden stretch still counts. An upload of a feed whose word here is older
      // than the stepped clock is the bug of seeds 83 and 91.
      const uploaded = new Set(
        during
          .slice(listing + 1)
          .filter((r) => r.method === 'POST' && /subscriptions/.test(r.path) && r.status === 200)
          .flatMap((r) => ((r.body as { add?: unknown } | undefined)?.add as string[] | undefined) ?? [])
          .filter((url) => steppedBefore || (word.get(url) ?? Infinity) > stepTime),
      );
      const pending = await engine.pending();
      // A move under way holds a pull's cursor (and its listing's tombstones) back until it settles.
      if (pending.some((c) => c.kind === 'update' && c.change?.feedUrl !== undefined)) return;
      for (const url of gone) {
        if (queued.has(url)) continue;
        if (uploaded.has(url) || pending.some((c) => names(c).includes(url))) {
          // Said again: the listing may hide it (mygpo lists nothing stamped after its "now"). The add goes up.
          // The engine cannot tell a hidden subscribe from one mygpo netted with the remove to nothing when the
          // subscribe reached it in an answer later than the listing's time (gPodder seed 504): it says it again.
          intent(url).local = { value: true, maybe: true, at: step };
          note(`clock step: ${url} is said again (the listing may hide it)`);
          continue;
        }
        const view = await engine.subscription(url);
        if (view?.isSubscribed && view.deleted === undefined) violations.push(`clock step: ${url}, removed by another device after the server's clock went back, is still subscribed here after the full listing, with no pending change`);
      }
    };
    const hostileStep = async () => {
      const kind = hr.pick([...hostile]);
      result.faults++;
      if (kind === 'html-2xx' && bulkAdded && avoid.has('bulk-portal-spin')) return void note('hostile: a login page for uploads after adds in bulk left out (known engine bug: bulk-portal-spin)');
      if (middleboxFault(kind, { transport, rng: hr, now: sim.now(), timeout: TIMEOUT, serverUrls: gpodderServerUrls, otherOrigin: other.origin, note })) {
        if (kind === 'redirect') redirectUsed = true;
      } else switch (kind) {
        case 'clock': {
          const ms = clockStep(hr);
          if (hr.chance(0.5)) {
            sim.stepDeviceClock(ms);
            note(`hostile: the device clock steps ${ms} ms (now ${sim.deviceOffset} ms off)`);
          } else {
            armed.push({ what: `the device clock steps ${ms} ms`, run: async () => sim.stepDeviceClock(ms) });
            note(`hostile: the device clock will step ${ms} ms during the next pull`);
          }
          break;
        }
        case 'retry-after': {
          const value = yearLong(hr, sim.now());
          const status = hr.pick([429, 503]);
          s.failNext(hr.int(1, 2), status, hr.pick([undefined, { method: 'GET' }, { method: 'POST' }]), { retryAfter: value });
          retryAfterUsed = true;
          note(`hostile: ${status} with Retry-After ${value.length > 40 ? `${value.slice(0, 12)}… (${value.length} digits)` : value}`);
          break;
        }
        case 'upload-413': {
          tooLargeUsed = true;
          const rule = uploadTooLarge(hr, sim.now());
          transport.proxy.push(rule);
          note(`hostile: uploads of more than ${rule.limit} URLs get 413 for ${rule.until! - sim.now()} ms`);
          break;
        }
        case 'timestamp-regress': {
          const back = hr.pick([5, 60, 600, 3600]) * 1000;
          serverSkew -= back;
          clockWentBack = true;
          note(`hostile: the server's clock goes back ${back / 1000} s (its timestamps regress)`);
          break;
        }
        case 'step-removes':
          await stepThenRemoves();
          break;
        case 'episode-renames':
          transport.rewrite.push(
            episodeRenames(hr, (from, to, kind, episodes) => {
              if (kind === 'refused') renameRefused = true;
              if (kind === 'new-url') rewritten.push({ from, episodes, logged: s.log().length, life });
              note(`hostile: an episode upload answer rewrites ${from} to ${JSON.stringify(to)} (${kind})`);
            }),
          );
          note('hostile: the next episode upload answers carry update_urls');
          break;
        case 'episode-cap':
          if (capArmed) break;
          capArmed = true;
          transport.proxy.push(episodeCap(() => capped.push({ at: sim.now(), life })));
          note('hostile: every full reconcile of listening state (since=1) is answered past the cap until calm');
          break;
        case 'other-tab':
          if (switched || armed.some((a) => a.what.startsWith('another tab') || a.what.startsWith('setAuth'))) break;
          armed.push({ what: 'another tab clears the store and signs in as the other account', run: signOutIn });
          note('hostile: another tab will sign out and in as the other account during the next pull');
          break;
        case 'set-auth':
          if (switched || armed.some((a) => a.what.startsWith('another tab') || a.what.startsWith('setAuth'))) break;
          armed.push({ what: 'setAuth() with the other account', run: switchAuth });
          note('hostile: the credentials switch to the other account during the next pull');
          break;
        case 'dead-server': {
          const rule = deadServer(hr, sim.now());
          transport.proxy.push(rule);
          // Issue 16 #6: many toggles of a few feeds while the server is dead (not offline), then it is back.
          const edits = hr.int(30, 120);
          const feeds = current().slice(0, 10);
          // The server answers with some latency once it is back: requests overlap as they do on a real network.
          transport.latency = hr.pick([0, 30, 150]);
          note(`hostile: the server refuses connections for ${rule.until! - sim.now()} ms, then answers in ${transport.latency} ms; a burst of ${edits} toggles of ${feeds.length} feeds`);
          for (let i = 0; i < edits && feeds.length; i++) {
            const url = hr.pick(feeds);
            const value = hr.chance(0.5);
            await local(...toggle(url, value));
            // A user's toggles are ms apart: the failed uploads (and so the changes' backoffs) spread out.
            await sim.sleep(hr.int(0, 20));
          }
          break;
        }
        case 'gateway-down': {
          const feeds = current().slice(0, 10);
          const toggle = async () => {
            if (!feeds.length) return;
            const url = hr.pick(feeds);
            const value = hr.chance(0.5);
            await local(`update(${url}, {isSubscribed: ${value}})`, (e) => e.update(url, { isSubscribed: value }), wants(url, value));
          };
          violations.push(...(await gatewayDownStep({ transport, rng: hr, now: sim.now, sleep: (ms) => sim.sleep(ms), engine: () => engine, edit: toggle, note })));
          break;
        }
      }
    };
    let online = true;

    const known = () => [...urls.keys()];
    // URLs this device moved away from: the engine resolves them to where they moved (an old guid leads to the
    // newest entry), so the app's later calls use the current URL; other devices may still touch the old one.
    const movedAway = new Set<string>();
    /** The step each URL was moved away at (its episodes went along). */
    const movedAt = new Map<string, number>();
    /** URLs this device removed. */
    const removed = new Set<string>();
    /** URLs the engine kept an episode change under another URL for (a move taken back): where to. */
    const resolvedTo = new Map<string, string>();
    /**
     * Every URL a story's episode may be under, in order: its own, and where its feed moved; before them, where
     * it may have moved back to. A move that did not hold (refused, cut off by a crash, or dropped by a remove
     * queued before it was sent) takes the subscription back, and everything listed under the URL it left with
     * it (another device's actions pulled under it meanwhile included).
     */
    const placesOf = (story: EpisodeStory): string[] => {
      const back: string[] = [];
      // A feed that ends unsubscribed here needs no upload of its moves: gPodder keeps no record of the new URL,
      // and the view (with its episodes) may show the old one again.
      const unsubscribed = intent(feedsOf(story).at(-1)!).local?.value === false;
      // A later move refused may have been queued behind (or folded into) this one's, and taken it back too.
      const laterRefused = (story.moves ?? []).some((url) => intent(url).refused);
      for (let at = story.podcast, from = intent(at).movedFrom; from !== undefined && !back.includes(from); at = from, from = intent(at).movedFrom) {
        if (!(intent(at).refused || laterRefused || removed.has(at) || intent(at).local?.maybe || unsubscribed)) break;
        back.unshift(from);
      }
      return [...back, ...feedsOf(story)];
    };
    const current = () => known().filter((url) => !movedAway.has(url));
    type Record = (maybe: boolean, view?: { isSubscribed: boolean }) => void;
    const local = async (what: string, run: (e: SyncEngine) => Promise<unknown>, record: Record, e = engine): Promise<void> => {
      try {
        record(false, (await run(e)) as { isSubscribed: boolean } | undefined);
        result.intents++;
        note(`${what} ok`);
      } catch (error) {
        if (isSyncError(error) && (error.code === 'not-found' || error.code === 'gone' || error.code === 'closed' || (switched && error.code === 'account-mismatch'))) note(`${what} rejected: ${error.code}`);
        else {
          violations.push(`${what} failed unexpectedly: ${error instanceof Error ? error.message : String(error)}`);
          note(`!! ${what}`);
        }
      }
    };
    const wants = (url: string, value: boolean) => (maybe: boolean) => {
      intent(url).local = { value, maybe, at: step };
    };
    /** A flag change; one equal to the engine's local view writes nothing (issue 25) and is no intent. */
    const toggle = (url: string, value: boolean): [string, (e: SyncEngine) => Promise<unknown>, Record] => {
      const what = `update(${url}, {isSubscribed: ${value}})`;
      let done: AnnouncedUpdate | undefined;
      const run = async (e: SyncEngine) => (done = await announcedUpdate(e, url, { isSubscribed: value })).view;
      return [what, run, (maybe) => (done && !done.wrote ? note(`${what} changed nothing`) : wants(url, value)(maybe))];
    };
    const planLocal = (): [string, (e: SyncEngine) => Promise<unknown>, Record] => {
      const kind = rng.weighted({ add: 3, toggle: 5, move: 2, remove: 2 });
      const url = current().length && kind !== 'add' ? rng.pick(current()) : freshFeed();
      if (kind === 'add') return [`add(${url})`, (e) => e.add(url), wants(url, true)];
      if (kind === 'toggle') {
        const value = rng.chance(0.5);
        return toggle(url, value);
      }
      if (kind === 'remove') {
        // A remove drops a queued move of that row (re-keying it back): later calls by this URL would reach
        // the row's old name. The app does not address what it removed again (a fresh add does).
        return [`remove(${url})`, (e) => e.remove(url), (maybe) => {
          wants(url, false)(maybe);
          movedAway.add(url);
          removed.add(url);
        }];
      }
      const to = movedFeed();
      return [
        `update(${url}, {feedUrl: ${to}})`,
        (e) => e.update(url, { feedUrl: to }),
        (maybe, view) => {
          // A move keeps the flag: the moved subscription is subscribed if it was (the view update() returns says).
          wants(url, false)(maybe);
          wants(to, view?.isSubscribed ?? true)(maybe || view === undefined);
          intent(to).movedFrom = url;
          movedAway.add(url);
          movedAt.set(url, step);
          // Its episodes move with it (whether the move holds is the server's to say: refused, they come back).
          // A URL the engine resolves to another (a move back) moves that one's.
          for (const story of episodes.values()) if ([url, resolvedTo.get(url)].includes(feedsOf(story).at(-1))) (story.moves ??= []).push(to);
        },
      ];
    };

    // Listening state: a listener's calls on episodes of the feeds this device knows (subscribed or not, and now
    // and then a feed nobody subscribed), and another device's play actions stamped around them.
    const er = rng.fork(4);
    /** Where the engine reads episode actions: the Nextcloud app's rows under its paths on a mygpo server, else the log. */
    const family = dialect === 'mygpo' && protocol === 'nextcloud' ? 'nextcloud' : 'api2';
    /** The story of an episode under `podcast`, made when there is none yet. */
    const storyOf = (podcast: string, episode: string, guid: string, stray: boolean): EpisodeStory => {
      const key = `${podcast}\n${guid}`;
      return episodes.get(key) ?? episodes.set(key, { podcast, episode, guid, stray, changes: [] }).get(key)!;
    };
    const episodeOf = (podcast: string, stray: boolean): EpisodeStory & { duration: number } => {
      const e = er.pick(s.feedEpisodes(podcast));
      return Object.assign(storyOf(podcast, e.url, e.guid, stray), { duration: e.duration });
    };
    const episodeStep = async () => {
      const feeds = current();
      const story = !feeds.length || er.chance(0.15) ? episodeOf(`https://strays.example/g${seed}/s${er.int(0, 2)}.xml`, true) : episodeOf(er.pick(feeds), false);
      const ref = { podcast: story.podcast, episode: story.episode, guid: story.guid };
      // A listener listens a while between calls: the device's time moves on, so changes land in different seconds.
      await sim.sleep(er.int(0, 1500));
      const kind = er.weighted({ progress: 5, played: 2, unplayed: 1 });
      const position = er.int(0, story.duration - 1);
      const withTotal = er.chance(0.7);
      const fields = kind === 'progress' ? { position, ...(withTotal ? { total: story.duration } : {}) } : { played: kind === 'played' };
      const what = kind === 'progress' ? `setProgress(${story.episode} of ${story.podcast}, ${JSON.stringify(fields)})` : `markPlayed(${story.episode} of ${story.podcast}, ${kind === 'played'})`;
      const before = sim.clock.now();
      try {
        const state = kind === 'progress' ? await engine.setProgress(ref, fields as { position: number; total?: number }) : await engine.markPlayed(ref, kind === 'played');
        // The engine stamps a change with its clock's reading (the device's time of the change), which is `before`:
        // nothing moves simulated time inside the call. A mark of what already holds changes nothing (no stamp, no
        // upload), and its state is older than the call.
        if (kind !== 'progress' && Date.parse(state.changedAt) < before) {
          note(`${what} held already: nothing queued`);
          return;
        }
        if (sim.clock.now() !== before) violations.push(`${what}: the device clock moved during the call (the model's stamp is its reading before)`);
        // Every change is a play (register.ts): progress is played only at the length (the scenario never sends it
        // there); played sets the position to the length, unplayed to 0. A change older than what the episode holds
        // (another device's stamp from the future) loses: the model's rule says so too.
        const recorded = kind === 'progress' ? { ...fields, played: false } : { ...fields, position: kind === 'played' ? story.duration : 0 };
        const at = before;
        // Under the URL the engine kept it: a URL its feed moved back from (a refused move) names the episode under
        // the one it moved back to, as a pulled action would; the model's URL may be that stale one.
        // Its story goes along, as its row did (the engine merges the two by the identity rule).
        const home = storyOf(state.podcast, story.episode, story.guid, story.stray);
        if (home !== story) {
          resolvedTo.set(story.podcast, state.podcast);
          home.changes.push(...story.changes);
          episodes.delete(`${story.podcast}\n${story.guid}`);
          note(`${what}: kept under ${state.podcast}`);
        }
        home.changes.push({ source: 'local', fields: recorded, at, maybe: false, step });
        result.episodeCalls++;
        note(`${what} ok at ${new Date(at).toISOString()}`);
      } catch (error) {
        // markPlayed(ref, true) before the engine knows the episode's length is refused (`invalid`), as the API says.
        const noLength = kind === 'played' && isSyncError(error) && error.code === 'invalid';
        if (noLength || (isSyncError(error) && (error.code === 'closed' || (switched && error.code === 'account-mismatch')))) note(`${what} rejected: ${(error as { code?: string }).code}`);
        else {
          violations.push(`${what} failed unexpectedly: ${error instanceof Error ? error.message : String(error)}`);
          note(`!! ${what}`);
        }
      }
    };
    const foreignEpisodeStep = () => {
      // A URL only this device's move named is known to another device only once the server has it.
      const onServer = new Set(s.state(mine).map((r) => r.url));
      const known = [...episodes.values()].filter((e) => !e.stray && !movedAway.has(e.podcast) && (intent(e.podcast).movedFrom === undefined || onServer.has(e.podcast)));
      const feeds = current();
      // Never a stray feed: opodsync subscribes a feed another device's action names.
      if (!known.length && !feeds.length) return;
      const picked = known.length && er.chance(0.7) ? er.pick(known) : episodeOf(er.pick(feeds), false);
      const duration = s.feedEpisodes(picked.podcast).find((e) => e.guid === picked.guid)!.duration;
      // Another device's time: seconds before or after this device's changes, never at or after the server's now
      // (mygpo lists nothing stamped later than its clock).
      const at = Math.min(Math.floor(sim.clock.now() / 1000) + er.int(-20, 5), s.timestamp() - 1) * 1000;
      const position = er.pick([0, duration, er.int(1, duration - 1)]);
      const hadRow = new Set(s.state(mine).map((r) => r.url)).has(picked.podcast);
      try {
        s.foreign.actions([{ podcast: picked.podcast, episode: picked.episode, guid: picked.guid, action: 'play', device: 'other-phone', timestamp: new Date(at).toISOString().slice(0, 19), started: 0, position, total: duration }]);
      } catch (error) {
        violations.push(`planting another device's action failed: ${String(error)}`);
        return;
      }
      // mygpo drops an exact repeat of (episode, device, action, started, position) whatever its time, and the
      // Nextcloud app refuses an overwrite that would give a row another row's URL: such an action never happened.
      const stored = s.episodeLog({ family }).some((a) => a.podcast === picked.podcast && (a.guid === picked.guid || a.episode === picked.episode) && a.timestamp * 1000 === at && a.position === position);
      if (!stored) {
        note(`foreign play ${picked.episode} of ${picked.podcast} at ${new Date(at).toISOString()}: ${position}/${duration} not stored by the server (a repeat)`);
        return;
      }
      picked.changes.push({ source: 'foreign', fields: playFields(position, duration), at, maybe: false, step });
      result.foreignActions++;
      // opodsync subscribes a feed with no subscription row: that is another device's add.
      if (!hadRow && s.subscribed(mine).includes(picked.podcast)) {
        intent(picked.podcast).foreign = { value: true, at: step };
        intent(picked.podcast).foreignAddedAt = step;
        (intent(picked.podcast).foreignValues ??= []).push(true);
        if (serverSkew < 0) intent(picked.podcast).pastStamped = true;
      }
      note(`foreign play ${picked.episode} of ${picked.podcast} at ${new Date(at).toISOString()}: ${position}/${duration}${hadRow ? '' : ' (no subscription row)'}`);
    };

    /** The listening-state invariants (episode-model.ts), once settled. */
    const episodeViolations = async (subscribed: Set<string>): Promise<string[]> => {
      const out: string[] = [];
      const log = s.episodeLog({ family });
      const same = (a: { podcast: string; episode: string; guid?: string | null }, e: EpisodeStory) => placesOf(e).includes(a.podcast) && (a.guid === e.guid || a.episode === e.episode);
      // This device's uploads, as stored or as sent (a row the Nextcloud app overwrote may have been pulled before):
      // changes that may count, at their whole second.
      const sent: { podcast: string; episode: string; guid?: string; timestamp: string; position: number; total: number }[] = [];
      for (const r of s.log()) {
        if (r.method !== 'POST' || !/episode/.test(r.path)) continue;
        const body = Array.isArray(r.body) ? r.body : (r.body as { actions?: unknown[] } | undefined)?.actions;
        if (Array.isArray(body)) sent.push(...(body as typeof sent).filter((a) => a && typeof a.timestamp === 'string'));
      }
      for (const story of episodes.values()) {
        const echoes = [
          ...log.filter((a) => a.device === DEVICE && same(a, story)).map((a) => ({ at: a.timestamp * 1000, position: a.position ?? 0, total: a.total ?? undefined })),
          ...sent.filter((a) => same(a, story)).map((a) => ({ at: Date.parse(`${a.timestamp}Z`), position: a.position, total: a.total })),
        ];
        for (const echo of echoes) story.changes.push({ source: 'upload', fields: playFields(echo.position, echo.total), at: echo.at, maybe: true, step: -1 });
        // Under the Nextcloud app the row keeps the last upload, whatever its time: another device's action that a
        // later upload replaced may never have been pulled.
        if (family === 'nextcloud') {
          for (const c of story.changes) {
            if (c.source === 'foreign' && !log.some((a) => a.device !== DEVICE && same(a, story) && a.timestamp * 1000 === c.at && a.position === c.fields.position)) c.maybe = true;
          }
        }
      }
      const held = await engine.episodes();
      for (const story of episodes.values()) {
        // Under the URL its feed has now (a move this device made took it along), and under no other.
        const found: { podcast: string; state: EpisodeState }[] = [];
        for (const podcast of placesOf(story)) {
          const held = await engine.episode({ podcast, episode: story.episode, guid: story.guid });
          if (held) found.push({ podcast, state: held });
        }
        // Unless a URL it moved away from was subscribed again since (another device's add): a feed of its own
        // then, whose actions on the server are its own episodes (the moved state is the later one's).
        const again = (url: string) => (intent(url).foreign?.value === true && intent(url).foreign!.at >= (movedAt.get(url) ?? Infinity));
        // Or unless the move from it did not hold (taken back, with what was pulled under the new URL meanwhile) and
        // another device subscribed the URL it was moved to since (opodsync subscribes a feed a play names without a
        // row): that URL is then a feed of its own on the server, whose later actions land under it, while the
        // state taken back stays with the feed the move left (the engine cannot tell it was pulled under the other).
        const last = found.at(-1)?.podcast;
        const back = placesOf(story).filter((url) => !feedsOf(story).includes(url));
        const ownFeed = (url: string) => back.includes(url) && last !== undefined && (intent(last).foreignAddedAt ?? -Infinity) >= (movedAt.get(url) ?? Infinity);
        if (found.length > 1 && !found.slice(0, -1).every((f) => again(f.podcast) || ownFeed(f.podcast))) {
          out.push(`episodes moved: ${story.episode} is held under ${found.map((f) => f.podcast).join(' and ')}: ${JSON.stringify(found)}`);
        }
        // Another device's action named a URL this device moved the feed away from, and that device subscribed the
        // URL again since: read before the add (an incremental pull) it followed the move; read only after (its
        // time behind the server's cursor, as the server's clock runs ahead: the next full reconcile) it is the
        // re-added feed's own. The engine cannot tell which the other device meant: it may count for either.
        // (gPodder seed 827, found once the service worker's event came between the page and the next start.)
        if (placesOf(story).some(again)) for (const c of story.changes) if (c.source === 'foreign') c.maybe = true;
        const state = found.at(-1)?.state;
        const podcast = found.at(-1)?.podcast ?? feedsOf(story).at(-1)!;
        // Each change's place in the server's answer (in one second the later wins, unless a local change pends).
        const listed = log.filter((a) => same(a, story));
        const ours = (a: EpisodeActionView) =>
          family === 'nextcloud' ? sent.some((x) => same(x, story) && Date.parse(`${x.timestamp}Z`) === a.timestamp * 1000 && x.position === a.position) : a.device === DEVICE;
        const place = (match: (a: EpisodeActionView) => boolean) => {
          for (let i = listed.length - 1; i >= 0; i--) if (match(listed[i]!)) return i;
          return undefined;
        };
        const locals = story.changes.filter((c) => c.source === 'local');
        const newestLocal = locals.reduce<ModelChange | undefined>((a, b) => (!a || b.at > a.at || (b.at === a.at && b.step > a.step) ? b : a), undefined);
        for (const c of story.changes) {
          if (c.source === 'foreign') c.rank = place((a) => !ours(a) && a.timestamp * 1000 === c.at && a.position === c.fields.position);
          else if (c.source === 'local') c.rank = state?.pending && c === newestLocal ? Infinity : place((a) => ours(a) && a.timestamp === Math.floor(c.at / 1000));
        }
        const refused = state?.error !== undefined && (refusals || redirectUsed || tooLargeUsed || renameRefused);
        if (refused) continue;
        out.push(...convergedViolations(story, state));
        // The Nextcloud app keys its rows by enclosure URL across feeds: another feed's episode with the same URL
        // (the catalog's feeds on one host share media names) overwrites this one's row, as the real app does.
        if (family === 'nextcloud' && [...episodes.values()].some((e) => e !== story && e.episode === story.episode)) continue;
        // The Nextcloud app's rows keep no device: a row is this device's when no other device's action is newer.
        // Under any URL the episode may be under: a change named an URL its feed moved back from is kept, and
        // uploaded, under the one it moved back to.
        out.push(...lostViolations(story, log, family === 'nextcloud' ? undefined : DEVICE, state, subscribed.has(podcast), family === 'nextcloud', placesOf(story)));
      }
      // A rewrite in `update_urls` names the episodes sent under the URL from then on: this device's later uploads
      // (while the engine that settled the answer lives on) never name one of them by the old URL; a rewrite to a
      // non-http(s) URL is ignored. Another feed's or guid's episode at the same URL was not renamed: it may.
      for (const r of rewritten) {
        const later = s.log().slice(r.logged).filter((x) => x.method === 'POST' && /episode/.test(x.path));
        const same = (a: SentEpisode & { episode?: unknown }) =>
          a?.episode === r.from && r.episodes.some((e) => (e.guid !== undefined ? e.guid === a.guid : e.podcast === a.podcast));
        const actionsOf = (body: unknown) => (Array.isArray(body) ? body : ((body as { actions?: unknown } | null)?.actions ?? [])) as (SentEpisode & { episode?: unknown })[];
        const again = later.some((x) => Array.isArray(actionsOf(x.body)) && actionsOf(x.body).some(same));
        if (again && r.life === life) out.push(`episodes: ${r.from} was rewritten by an upload answer's update_urls, yet uploaded again under it`);
      }
      for (const e of held) {
        if (!/^https?:\/\//i.test(e.episode)) out.push(`episodes: a media URL that is not http(s) is held: ${JSON.stringify(e)}`);
        if (e.pending && subscribed.has(e.podcast) && !e.error) out.push(`episodes: still pending on a subscribed feed: ${JSON.stringify(e)}`);
        if (![...episodes.values()].some((story) => placesOf(story).includes(e.podcast) && (story.guid === e.guid || story.episode === e.episode))) {
          out.push(`episodes: the store holds an episode nobody touched: ${JSON.stringify(e)}`);
        }
      }
      out.push(...strayViolations(episodes.values(), log));
      note(`episodes: ${episodes.size} touched, ${held.length} held, ${log.filter((a) => a.device === DEVICE).length} of this device's actions on the server`);
      return out;
    };

    // ---- the soak families of issues 31 and 33 (families.ts) -------------------------------------

    /** The page's copies on their way (sent as it went away): the calm phase lets them land first. */
    const copiesSent: Promise<unknown>[] = [];
    const pageTransport = copies ? createTransport({ serverOrigin: s.origin, otherOrigin: other.origin, rng: rng.fork(7), sim }) : undefined;
    const skipFamily = (family: Family, why: string) => note(`family ${family} skipped: ${why}`);
    const syncFor = () => Promise.race([engine.sync().then(() => true, () => true), sim.sleep(2500).then(() => false)]);
    const uploads = (body: unknown) => {
      const b = (body ?? {}) as { add?: unknown; remove?: unknown };
      return [...(Array.isArray(b.add) ? b.add : []), ...(Array.isArray(b.remove) ? b.remove : [])] as string[];
    };
    const isUpload = (method: string, url: URL) => method === 'POST' && /subscriptions/.test(url.pathname);

    /** Issue 31: a follower tab's edit while the leader's upload carrying the same feed is in flight. */
    const followerFamily = async () => {
      if (!online || switched) return skipFamily('follower', online ? 'another account holds the store' : 'offline');
      const candidates = current().filter((url) => !removed.has(url) && !intent(url).local?.maybe);
      if (!candidates.length) return skipFamily('follower', 'nothing to edit');
      const url = fr.pick(candidates);
      const view = await engine.subscription(url).catch(() => undefined);
      if (!view || view.deleted !== undefined || view.guid !== url) return skipFamily('follower', `${url} is not a live row of its own here`);
      const value = !view.isSubscribed;
      // The leader's upload must land for the follower's edit to matter (a fold-back then loses it): faults queued
      // at the server by earlier steps would refuse it instead.
      s.clearFaults();
      note("family follower: the server's queued faults are cleared (the leader's upload is to land)");
      let fired = false;
      let leader = false;
      const hook = async ({ method, url: at, body }: OutgoingRequest) => {
        if (fired || !leader || !isUpload(method, at) || !uploads(body).includes(url)) return;
        fired = true;
        const tab = createSyncEngine(options);
        scope.defer(() => tab.close());
        tab.setOnline(false);
        const wrote = result.intents;
        const [what, run, record] = toggle(url, !value);
        await local(`follower: ${what}`, run, record, tab);
        await tab.close();
        if (result.intents > wrote) note(`${ran('follower')} a follower tab set ${url} back to ${!value} while the leader's upload ${JSON.stringify(body)} was in flight`);
      };
      // Armed before the edit: the push may start the moment it is stored.
      hooks.push(hook);
      try {
        const before = result.intents;
        leader = true;
        await local(...toggle(url, value));
        if (result.intents === before) return skipFamily('follower', 'the leader wrote nothing');
        for (let i = 0; i < 3 && !fired; i++) if (!(await syncFor())) note('sync still running; moving on');
      } finally {
        leader = false;
        hooks = hooks.filter((h) => h !== hook);
      }
      if (!fired) skipFamily('follower', `no upload carried ${url}`);
    };

    /**
     * Issue 31: an add (a new feed, or a feed this device unsubscribed before) the server handled and whose answer
     * never came; then another device removes it before the retry, or (the re-subscribe case) nobody does.
     */
    const lostAnswerFamily = async () => {
      if (!online || switched) return skipFamily('lost-answer', online ? 'another account holds the store' : 'offline');
      const unsubscribed: string[] = [];
      for (const url of current()) {
        if (removed.has(url) || intent(url).local?.maybe) continue;
        const view = await engine.subscription(url).catch(() => undefined);
        if (view && view.guid === url && !view.isSubscribed && view.deleted === undefined && !(await engine.pending()).some((c) => c.guid === url)) unsubscribed.push(url);
      }
      const resubscribe = unsubscribed.length > 0 && fr.chance(0.5);
      const url = resubscribe ? fr.pick(unsubscribed) : freshFeed();
      const foreign = fr.chance(0.75);
      // An add first handed out before any pull completed has no server time to tell the remove is later (a limit).
      const cursor = (await readStore(options.dbName)).cursor !== undefined;
      let recorded = false;
      const later: (() => void)[] = [];
      const rule: LostAnswerRule = {
        remaining: 1,
        match: (method, at, body) => isUpload(method, at) && ((body ?? {}) as { add?: unknown[] }).add?.includes(url) === true,
        then: () => {
          if (!foreign) {
            note(`${ran('lost-answer')} the server handled the upload subscribing ${url}; its answer was lost, and nobody changed it since`);
            return;
          }
          s.foreign.remove([url]);
          result.foreign++;
          const mark = () => {
            const story = intent(url);
            story.foreign = { value: false, at: step };
            (story.foreignValues ??= []).push(false);
            if (serverSkew < 0) story.pastStamped = true;
            // The add reached the server before the remove: the remove is the later word, whatever the retry does.
            // Not for a re-subscribe: a remove restates the word the store had when it left (unsubscribed), which
            // is what an upload that never arrived leaves too, so it goes again (by design: nothing is lost).
            if (cursor && !resubscribe) story.landed = { local: story.local, foreign: story.foreign };
          };
          if (recorded) mark();
          else later.push(mark);
          note(`${ran('lost-answer')} the server handled the upload subscribing ${url}, its answer was lost, and another device removed it`);
        },
      };
      transport.lose.push(rule);
      try {
        await local(`add(${url})`, (e) => e.add(url), wants(url, true));
        recorded = true;
        for (const fn of later) fn();
        // Now and then the page goes away right after the lost answer, before the retry's pull (its copy still holds the add).
        const leave = copies && fr.chance(0.5);
        if (leave) for (let i = 0; i < 60 && rule.remaining; i++) await sim.sleep(1);
        if (leave && !rule.remaining) {
          if (avoid.has('copy-resends-unsettled-add')) note('the page going away right after the lost answer left out (known engine bug: copy-resends-unsettled-add)');
          else await pageGoesAway(' right after the lost answer');
        }
        for (let i = 0; i < 3 && rule.remaining; i++) if (!(await syncFor())) note('sync still running; moving on');
      } finally {
        transport.lose = transport.lose.filter((r) => r !== rule);
      }
      if (rule.remaining) skipFamily('lost-answer', `no upload subscribing ${url} was answered`);
    };

    /** Issue 31: the page's last copy sent as it goes away, maybe with the worker's own upload in flight; then the next start. */
    const lastCopyFamily = async () => {
      if (!online || switched || !pageTransport) return skipFamily('last-copy', online ? 'another account holds the store' : 'offline');
      // Edits made offline wait in the queue; back online, the worker starts sending them.
      engine.setOnline(false);
      for (let i = fr.int(1, 3); i > 0; i--) {
        const [what, run, record] = planLocal();
        await local(what, run, record);
      }
      engine.setOnline(true);
      const run = fr.chance(0.6) ? engine.sync().catch(() => undefined) : undefined;
      await sim.sleep(fr.pick([0, 0, fr.int(1, 5), fr.int(1, 40)]));
      const copy = await pageGoesAway('', run);
      // The app edits at once: a feed the copy carried, taken back before the new engine sent anything.
      const carried = copy.flatMap((r) => (r.method === 'POST' && /subscriptions/.test(r.path) && r.body ? uploads(JSON.parse(r.body)) : []));
      const candidates = carried.filter((url) => current().includes(url) && !removed.has(url));
      if (!candidates.length || fr.chance(0.3)) return;
      if (avoid.has('copy-then-fold-back')) return void note('the next start taking back a change the copy carried left out (known engine bug: copy-then-fold-back)');
      const url = fr.pick(candidates);
      const view = await engine.subscription(url).catch(() => undefined);
      if (!view || view.guid !== url || view.deleted !== undefined) return;
      const [what, edit, record] = toggle(url, !view.isSubscribed);
      await local(`the next start: ${what}`, edit, record);
    };

    /** Issue 33: many feeds at once (`addMany`, or an OPML import), offline or online, maybe with 413s on large uploads. */
    /** Adds in bulk went in (the bulk-portal-spin steering keeps login pages away from them). */
    let bulkAdded = false;
    const bulkFamily = async () => {
      if (switched) return skipFamily('bulk', 'another account holds the store');
      if (avoid.has('bulk-portal-spin') && transport.proxy.some((r) => r.name === 'html-2xx' && (r.until === undefined || r.until > sim.now()))) {
        return void note('family bulk while a proxy answers uploads with a login page left out (known engine bug: bulk-portal-spin)');
      }
      const n = fr.pick([3, 12, 40, 120, 250]);
      const fresh = Array.from({ length: n }, () => freshFeed());
      const views = await engine.subscriptions();
      const known = views.filter((v) => v.isSubscribed && current().includes(v.guid)).map((v) => v.guid);
      const list = bulkList(fr, fresh, known);
      const offline = online && fr.chance(0.5);
      if (offline) engine.setOnline(false);
      if (fr.chance(0.4)) {
        const limit = fr.int(2, 60);
        transport.proxy.push(tooLarge(limit, sim.now() + fr.int(2_000, 20_000)));
        note(`bulk: uploads of more than ${limit} feeds get 413 for a while`);
      }
      const opml = fr.chance(0.4);
      let report: AddManyReport;
      try {
        if (opml) ensureDomParser();
        report = opml ? await importOpml(engine, opmlOf(fr, list)) : await engine.addMany(list);
      } catch (error) {
        if (offline) engine.setOnline(true);
        if (isSyncError(error) && (error.code === 'closed' || error.code === 'account-mismatch')) return note(`bulk rejected: ${error.code}`);
        violations.push(`${opml ? 'importOpml' : 'addMany'} failed unexpectedly: ${error instanceof Error ? error.message : String(error)}`);
        return;
      }
      for (const url of report.added) {
        wants(url, true)(false);
        result.intents++;
      }
      bulkAdded ||= report.added.length > 0;
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
      copiesSent.push(sendCopy(copy, s.url, options.auth, pageTransport!.fetch));
      result.crashes++;
      life++;
      const dying = engine;
      await dying.close();
      await run;
      if (swr.chance(0.5)) {
        const ms = swr.int(0, 3000);
        note(`the service worker's sync event: its engine runs ${ms} ms`);
        const left = await serviceWorkerEvent(() => {
          const e = createSyncEngine(options);
          scope.defer(() => e.close());
          return e;
        }, (t) => sim.sleep(t), ms);
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
        // Another account may take the store during a pull the family started: its reads are refused then.
        if (switched && isSyncError(error) && error.code === 'account-mismatch') note(`family ${family} cut short: another account holds the store`);
        else violations.push(`family ${family} failed unexpectedly: ${error instanceof Error ? error.message : String(error)}`);
      }
    };

    for (; step < steps; step++) {
      for (const family of familyAt.get(step) ?? []) await familyStep(family);
      if (!online && rng.chance(0.3)) {
        engine.setOnline(true);
        online = true;
        note('online');
      }
      switch (rng.weighted({ local: 10, foreign: 4, episode: 6, foreignEpisode: 3, sync: 5, wait: 4, fault: 5, crash: 2, offline: 1, hostile: hostile.size ? 3 : 0 })) {
        case 'episode':
          await episodeStep();
          break;
        case 'foreignEpisode':
          foreignEpisodeStep();
          break;
        case 'hostile':
          await hostileStep();
          break;
        case 'local': {
          const [what, run, record] = planLocal();
          await local(what, run, record);
          break;
        }
        case 'foreign': {
          const url = known().length && rng.chance(0.7) ? rng.pick(known()) : freshFeed();
          const value = rng.chance(0.5);
          (value ? s.foreign.add : s.foreign.remove)([url]);
          intent(url).foreign = { value, at: step };
          if (value) intent(url).foreignAddedAt = step;
          if (serverSkew < 0) intent(url).pastStamped = true;
          (intent(url).foreignValues ??= []).push(value);
          result.foreign++;
          note(`foreign ${value ? 'add' : 'remove'} ${url}`);
          break;
        }
        case 'sync': {
          const report = await Promise.race([engine.sync().catch((error: unknown) => error), sim.sleep(2500).then(() => 'still running')]);
          note(`sync: ${isSyncError(report) ? `failed ${report.code}` : typeof report === 'string' ? report : `pushed ${(report as { pushed: number }).pushed}`}`);
          if (isSyncError(report) && report.code === 'network' && isRedirectAsNetwork(report)) {
            violations.push(`sync() failed as network after a redirect to another origin (issue 16 #15): ${report.message}`);
          }
          break;
        }
        case 'wait': {
          const ms = rng.int(1, 80);
          await sim.sleep(ms);
          note(`wait ${ms} ms`);
          break;
        }
        case 'fault': {
          const method = rng.pick(['GET', 'POST', undefined]);
          const match = method ? { method } : undefined;
          const kind = rng.weighted({ fail: 4, limit: 1, drop: 2, lost: 2, refuse: 1 });
          if (kind === 'fail') s.failNext(rng.int(1, 3), rng.pick([500, 502, 503]), match);
          if (kind === 'limit') s.failNext(1, 429, match, { retryAfter: 0 });
          if (kind === 'drop') s.dropNext(rng.int(1, 2), match, { afterHandling: rng.chance(0.5) });
          if (kind === 'lost') s.malformNext(1, match, undefined, { afterHandling: true });
          if (kind === 'refuse') {
            s.failNext(1, 400, { method: 'POST' });
            refusals = true;
          }
          result.faults++;
          note(`fault: ${kind} on ${method ?? 'any'}`);
          break;
        }
        case 'crash': {
          result.crashes++;
          const dying = engine;
          const during = rng.chance(0.5);
          let cut: Promise<void> | undefined;
          if (during) {
            const [what, run, record] = planLocal();
            cut = run(dying).then(
              (view) => {
                record(false, view as { isSubscribed: boolean } | undefined);
                note(`crash: ${what} had resolved`);
              },
              () => {
                record(true);
                note(`crash: ${what} was cut off`);
              },
            );
          }
          await sim.ticks(rng.int(0, 12));
          note('crash: killing the engine');
          life++;
          await dying.close();
          await cut;
          engine = open();
          if (!online) engine.setOnline(false);
          break;
        }
        case 'offline':
          if (online) {
            engine.setOnline(false);
            online = false;
            note('offline');
          }
          break;
      }
      if (switched && switched.backAt < 0) switched.backAt = step + hr.int(1, 3);
      if (hostile.size) await storeCheck(`after step ${step}`);
      if (switched && step >= switched.backAt) await switchBack('after a few steps');
    }

    note('calm: faults cleared, online');
    transport.latency = 0;
    transport.proxy = [];
    transport.rewrite = [];
    transport.lose = [];
    hooks = [];
    armed = [];
    await midPull?.catch(() => undefined);
    await Promise.all(copiesSent);
    await switchBack('calm');
    // The server's clock is set right again (as NTP would): a server whose clock went back answers no change
    // made after its "now" (mygpo lists changes up to now), so nothing could converge until it caught up.
    if (serverSkew !== 0) {
      serverSkew = 0;
      note('calm: the server clock is right again');
    }
    s.clearFaults();
    transport.weather = { ...CALM };
    engine.setOnline(true);
    // A server that asked to wait a year gets at most a day (the cap issue 16 #9 asks for): simulated time is cheap.
    const patience = retryAfterUsed ? 26 * 3_600_000 : 20_000;
    const maxPause = retryAfterUsed ? 600_000 : 15;
    await settleEngine(engine, patience, sim, maxPause);
    // What the server refused for good: the app discards it (only after injected refusals).
    for (const change of await engine.failed()) {
      // A change queued behind a refused add can never reach the server either: its failure follows the refusal.
      const followsRefusal = (refusals || redirectUsed || tooLargeUsed) && change.reason.code === 'not-found' && /no server URL yet/.test(change.reason.message);
      // A redirect to another origin is a refusal (issue 16 #15): what it refused may sit in failed().
      const redirected = redirectUsed && change.reason.status !== undefined && change.reason.status >= 300 && change.reason.status < 400;
      const tooLarge = tooLargeUsed && change.reason.status === 413;
      if (!followsRefusal && !redirected && !tooLarge && (!refusals || change.reason.status !== 400)) violations.push(`failed without a refusal: ${change.kind} ${change.guid} (${change.reason.message})`);
      for (const url of [change.guid, change.feedUrl, change.change?.feedUrl]) if (url) intent(url).refused = true;
      await engine.discard(change.id);
    }
    await settleEngine(engine, patience, sim, maxPause);
    if (episodes.size) {
      // A day on, the engine's daily full reconcile reads every action again: another device's late upload of an
      // old action is one no `since` pull sees (the README's figures), and every planted action here is late.
      await sim.sleep(RECONCILE_INTERVAL + 60_000);
      const report = await engine.sync().catch((error: unknown) => error);
      note(`a day later: sync ${isSyncError(report) ? `failed ${report.code}` : 'ok'}`);
      await settleEngine(engine, patience, sim, maxPause);
    }
    if (hostile.size) await storeCheck('after settling');

    note('check: invariants');
    // A reconcile past the cap is recorded as tried: no second full read of the history within an interval.
    for (let i = 1; i < capped.length; i++) {
      const [a, b] = [capped[i - 1]!, capped[i]!];
      if (a.life === b.life && b.at - a.at < RECONCILE_INTERVAL) violations.push(`episode cap: the full reconcile was asked again ${b.at - a.at} ms after one answered past the cap (the retry waits ${RECONCILE_INTERVAL} ms)`);
    }
    const serverHas = new Set(s.subscribed(mine));
    const views = await engine.subscriptions({ includeDeleted: true });
    const localHas = new Set(views.filter((v) => v.isSubscribed && v.deleted === undefined).map((v) => v.guid));
    for (const url of new Set([...serverHas, ...localHas])) {
      if (urls.get(url)?.pastStamped) continue;
      if (serverHas.has(url) !== localHas.has(url)) violations.push(`converged: ${url} is ${serverHas.has(url) ? '' : 'not '}subscribed on the server but ${localHas.has(url) ? '' : 'not '}locally`);
    }
    if ((await engine.pending()).length) violations.push(`converged: still pending: ${JSON.stringify(await engine.pending())}`);
    // What this device uploaded as an add: with the server's clock behind, also a feed a full listing left out
    // and the engine said again (mygpo may hide it). A listing also lists a feed as subscribed when it hides a
    // later remove (stamped after its "now"), or hides both a subscribe and another device's remove after it
    // (gPodder seed 52: one step back of an hour over a remove made just before), so such a feed may be said
    // again: a protocol limit of a server that lists nothing after its clock (README, "Servers it syncs with").
    const saidAgain = new Set(s.log().filter((r) => r.method === 'POST' && /subscription/.test(r.path)).flatMap((r) => ((r.body as { add?: unknown } | undefined)?.add as string[] | undefined) ?? []));
    for (const [url, story] of urls) {
      if (story.refused || story.local?.maybe) continue;
      const now = serverHas.has(url);
      const allowed = new Set<boolean>();
      if (clockWentBack && dialect === 'mygpo' && saidAgain.has(url)) allowed.add(true);
      if (story.local) allowed.add(story.local.value);
      if (story.foreign) allowed.add(story.foreign.value);
      if (!story.local && !story.foreign) allowed.add(story.initial === true);
      // An add that reached the server before another device's remove (its answer lost): the remove is the later
      // word, and a retry that re-subscribes the feed undoes it. Protocol limits: with the server's clock set back,
      // the stamps cannot tell which came first; mygpo's /api/2 lists the net effect since the cursor, and a
      // subscribe and a remove net to nothing, which is also what an upload that never arrived leaves.
      const nets = dialect === 'mygpo' && protocol === 'gpodder';
      if (story.landed && story.landed.local === story.local && story.landed.foreign === story.foreign && story.foreign && !clockWentBack && !story.pastStamped && !nets) {
        allowed.clear();
        allowed.add(story.foreign.value);
      }
      // Both wrote: the server keeps whichever arrived last (no preconditions in the protocol).
      if (!allowed.has(now)) violations.push(`lost: ${url} is ${now ? '' : 'not '}subscribed on the server; intents: ${JSON.stringify(story)}`);
    }
    violations.push(...(await episodeViolations(localHas)));
    if (hostile.size) {
      // Nothing of this account was sent to the other one.
      const strays = s.state(bobs).filter((row) => !isBobs(row.url));
      if (strays.length) violations.push(`accounts: the other account's list on the server holds this account's URLs: ${strays.slice(0, 3).map((r) => r.url).join(', ')}`);
      violations.push(...overlapViolations(transport));
      violations.push(...spinViolations(transport.audit, appActions, options.retry));
    }
    const leaks = transport.sent.filter((r) => r.origin !== s.origin);
    if (leaks.length || other.received.length) violations.push(`credentials: requests left the base origin: ${JSON.stringify(leaks.slice(0, 3))}`);
    result.requests = s.log().length;
    note(`end: ${result.requests} requests, server list ${JSON.stringify([...serverHas].sort())}`);
  };

  const watchdog = stallWatchdog(() => trace.length, 60_000, () => 'hung: no step for 60 s');
  try {
    await Promise.race([body(), watchdog.hung, runaway]);
  } catch (error) {
    if (error instanceof RunawayError) violations.push(error.message);
    else violations.push(`the scenario could not finish: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  } finally {
    watchdog.stop();
    if (violations.length && server) for (const r of server.log().slice(-(Number(process.env.CHAOS_LOG) || 20))) trace.push(`${r.method} ${r.path} → ${r.status}${r.fault ? ` (${r.fault})` : ''} ${r.body ? JSON.stringify(r.body) : ''}`);
    await Promise.race([scope.close(), sleep(3000)]);
    sim.stop();
  }
  if (violations.length) throw new GpodderScenarioFailure(seed, violations.map((v) => `  - ${v}`).join('\n'), trace);
  return result;
}
