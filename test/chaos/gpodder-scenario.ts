// The randomised chaos scenario against the gPodder reference server (mygpo or opodsync dialect, v2 or
// Nextcloud paths), in simulated time like the OPA one (sim.ts): local adds, toggles, feed URL moves and
// removes; another device's uploads; 5xx, 429, dropped connections, lost answers, whole-upload refusals;
// crashes and offline spells. Then the faults stop, the engine settles, and the same invariants are checked
// in gPodder's terms: converged, nothing lost or doubled per URL, nothing pending, credentials kept home.
import { isSyncError } from '../../src/errors.ts';
import type { SyncEngine } from '../../worker/index.ts';
import { createSyncEngine } from '../../worker/index.ts';
import { startGpodderServer } from '../server/gpodder/server.ts';
import type { GpodderDialect, GpodderServer, ListTarget } from '../server/gpodder/types.ts';
import { chaosDbName, otherOrigin, Scope, settleEngine, sleep } from './fixtures.ts';
import { prng } from './prng.ts';
import { createSimulation } from './sim.ts';
import { CALM, createTransport } from './transport.ts';

/** What a gPodder scenario did. */
export interface GpodderScenarioResult {
  seed: number;
  dialect: GpodderDialect;
  protocol: 'gpodder' | 'nextcloud';
  intents: number;
  foreign: number;
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
  /** Every value another device gave it (a move carries whichever the engine had pulled when it was sent). */
  foreignValues?: boolean[];
  initial?: boolean;
  /** A change of it the server refused (and the app then discarded). */
  refused?: boolean;
  /** It is where this device moved another URL: a move keeps the flag, so another device's change of the old URL counts. */
  movedFrom?: string;
}

const USER = 'alice';
const PASSWORD = 'alice-password';
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
export async function runGpodderScenario(seed: number, steps = 40): Promise<GpodderScenarioResult> {
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
  const result: GpodderScenarioResult = { seed, dialect, protocol, intents: 0, foreign: 0, crashes: 0, faults: 0, requests: 0, trace };
  const urls = new Map<string, UrlIntent>();
  const intent = (url: string) => urls.get(url) ?? (urls.set(url, {}).get(url)!);
  let step = 0;
  let fresh = 0;
  const freshFeed = () => `https://feeds.example/g${seed}/f${fresh++}.xml`;
  let refusals = false;
  let server: GpodderServer | undefined;

  const body = async () => {
    // The protocol's clock has whole seconds: each reading is a new second, so no two events share one (the
    // same-second gap of mygpo's exclusive `since` is a protocol limit the README states, not an engine bug).
    const s = await startGpodderServer({ port: 0, randomSeed: 0x9bd, dialect, users: { [USER]: PASSWORD }, time: { ...sim.serverTime, now: () => start + (sim.serverTime.now() - start) * 1000 } });
    server = s;
    scope.defer(() => s.close());
    const other = await otherOrigin(scope);
    const transport = createTransport({ serverOrigin: s.origin, otherOrigin: other.origin, rng: rng.fork(1), sim });
    // The engine's list: under mygpo the device's own (v2 paths) or the user's (Nextcloud paths).
    const mine: ListTarget = dialect === 'mygpo' && protocol === 'gpodder' ? { device: DEVICE } : {};
    if (dialect === 'mygpo') s.registerDevice(DEVICE);
    for (const url of s.seed(rng.int(2, 8))) intent(url).initial = true;
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
    note(`setup: ${dialect} server, ${protocol} paths, ${urls.size} URLs`);
    const open = (): SyncEngine => {
      const e = createSyncEngine(options);
      scope.defer(() => e.close());
      return e;
    };
    let engine = open();
    let online = true;

    const known = () => [...urls.keys()];
    // URLs this device moved away from: the engine resolves them to where they moved (an old guid leads to the
    // newest entry), so the app's later calls use the current URL; other devices may still touch the old one.
    const movedAway = new Set<string>();
    const current = () => known().filter((url) => !movedAway.has(url));
    type Record = (maybe: boolean, view?: { isSubscribed: boolean }) => void;
    const local = async (what: string, run: (e: SyncEngine) => Promise<unknown>, record: Record, e = engine): Promise<void> => {
      try {
        record(false, (await run(e)) as { isSubscribed: boolean } | undefined);
        result.intents++;
        note(`${what} ok`);
      } catch (error) {
        if (isSyncError(error) && (error.code === 'not-found' || error.code === 'gone' || error.code === 'closed')) note(`${what} rejected: ${error.code}`);
        else {
          violations.push(`${what} failed unexpectedly: ${error instanceof Error ? error.message : String(error)}`);
          note(`!! ${what}`);
        }
      }
    };
    const wants = (url: string, value: boolean) => (maybe: boolean) => {
      intent(url).local = { value, maybe, at: step };
    };
    const planLocal = (): [string, (e: SyncEngine) => Promise<unknown>, Record] => {
      const kind = rng.weighted({ add: 3, toggle: 5, move: 2, remove: 2 });
      const url = current().length && kind !== 'add' ? rng.pick(current()) : freshFeed();
      if (kind === 'add') return [`add(${url})`, (e) => e.add(url), wants(url, true)];
      if (kind === 'toggle') {
        const value = rng.chance(0.5);
        return [`update(${url}, {isSubscribed: ${value}})`, (e) => e.update(url, { isSubscribed: value }), wants(url, value)];
      }
      if (kind === 'remove') {
        // A remove drops a queued move of that row (re-keying it back): later calls by this URL would reach
        // the row's old name. The app does not address what it removed again (a fresh add does).
        return [`remove(${url})`, (e) => e.remove(url), (maybe) => {
          wants(url, false)(maybe);
          movedAway.add(url);
        }];
      }
      const to = freshFeed();
      return [
        `update(${url}, {feedUrl: ${to}})`,
        (e) => e.update(url, { feedUrl: to }),
        (maybe, view) => {
          // A move keeps the flag: the moved subscription is subscribed if it was (the view update() returns says).
          wants(url, false)(maybe);
          wants(to, view?.isSubscribed ?? true)(maybe || view === undefined);
          intent(to).movedFrom = url;
          movedAway.add(url);
        },
      ];
    };

    for (; step < steps; step++) {
      if (!online && rng.chance(0.3)) {
        engine.setOnline(true);
        online = true;
        note('online');
      }
      switch (rng.weighted({ local: 10, foreign: 4, sync: 5, wait: 4, fault: 5, crash: 2, offline: 1 })) {
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
          (intent(url).foreignValues ??= []).push(value);
          result.foreign++;
          note(`foreign ${value ? 'add' : 'remove'} ${url}`);
          break;
        }
        case 'sync': {
          const report = await Promise.race([engine.sync().catch((error: unknown) => error), sim.sleep(2500).then(() => 'still running')]);
          note(`sync: ${isSyncError(report) ? `failed ${report.code}` : typeof report === 'string' ? report : `pushed ${(report as { pushed: number }).pushed}`}`);
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
    }

    note('calm: faults cleared, online');
    s.clearFaults();
    transport.weather = { ...CALM };
    engine.setOnline(true);
    await settleEngine(engine, 20_000, sim);
    // What the server refused for good: the app discards it (only after injected refusals).
    for (const change of await engine.failed()) {
      // A change queued behind a refused add can never reach the server either: its failure follows the refusal.
      const followsRefusal = refusals && change.reason.code === 'not-found' && /no server URL yet/.test(change.reason.message);
      if (!followsRefusal && (!refusals || change.reason.status !== 400)) violations.push(`failed without a refusal: ${change.kind} ${change.guid} (${change.reason.message})`);
      for (const url of [change.guid, change.feedUrl, change.change?.feedUrl]) if (url) intent(url).refused = true;
      await engine.discard(change.id);
    }
    await settleEngine(engine, 20_000, sim);

    note('check: invariants');
    const serverHas = new Set(s.subscribed(mine));
    const views = await engine.subscriptions({ includeDeleted: true });
    const localHas = new Set(views.filter((v) => v.isSubscribed && v.deleted === undefined).map((v) => v.guid));
    for (const url of new Set([...serverHas, ...localHas])) {
      if (serverHas.has(url) !== localHas.has(url)) violations.push(`converged: ${url} is ${serverHas.has(url) ? '' : 'not '}subscribed on the server but ${localHas.has(url) ? '' : 'not '}locally`);
    }
    if ((await engine.pending()).length) violations.push(`converged: still pending: ${JSON.stringify(await engine.pending())}`);
    for (const [url, story] of urls) {
      if (story.refused || story.local?.maybe) continue;
      const now = serverHas.has(url);
      const allowed = new Set<boolean>();
      if (story.local) allowed.add(story.local.value);
      if (story.foreign) allowed.add(story.foreign.value);
      if (!story.local && !story.foreign) allowed.add(story.initial === true);
      // Both wrote: the server keeps whichever arrived last (no preconditions in the protocol).
      if (!allowed.has(now)) violations.push(`lost: ${url} is ${now ? '' : 'not '}subscribed on the server; intents: ${JSON.stringify(story)}`);
    }
    const leaks = transport.sent.filter((r) => r.origin !== s.origin);
    if (leaks.length || other.received.length) violations.push(`credentials: requests left the base origin: ${JSON.stringify(leaks.slice(0, 3))}`);
    result.requests = s.log().length;
    note(`end: ${result.requests} requests, server list ${JSON.stringify([...serverHas].sort())}`);
  };

  let timer: ReturnType<typeof setTimeout> | undefined;
  const watchdog = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('hung: still running after 60 s')), 60_000);
  });
  try {
    await Promise.race([body(), watchdog]);
  } catch (error) {
    violations.push(`the scenario could not finish: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  } finally {
    clearTimeout(timer);
    if (violations.length && server) for (const r of server.log().slice(-20)) trace.push(`${r.method} ${r.path} → ${r.status}${r.fault ? ` (${r.fault})` : ''} ${r.body ? JSON.stringify(r.body) : ''}`);
    await Promise.race([scope.close(), sleep(3000)]);
    sim.stop();
  }
  if (violations.length) throw new GpodderScenarioFailure(seed, violations.map((v) => `  - ${v}`).join('\n'), trace);
  return result;
}
