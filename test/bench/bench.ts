// The benchmark itself, in one engine per run: the browser on an on-disk profile (where the engine has one),
// the reference server on loopback, the real client and module worker (a production build of the bench
// page), real IndexedDB. `runBench` returns the
// figures; run.ts prints them and writes the JSON; smoke.check.ts runs the quick plan and checks the shape.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { playwrightPage } from '../support/drivers/chromium.ts';
import type { BrowserPage, EngineName } from '../support/browsers.ts';
import { startGpodderServer } from '../server/gpodder/server.ts';
import { startServer } from '../server/server.ts';
import type { RefServer, RequestLogEntry } from '../server/types.ts';
import type { BenchApi, PullArgs } from './pages/api.ts';
import { call, launchBenchBrowser, type BenchBrowser } from './support/browser.ts';
import { sampleWorkerHeaps, type HeapSampler } from './support/heap.ts';
import { measureSize, type SizeResult } from './support/size.ts';
import { measureSwSize } from './support/sw-size.ts';
import { startSite } from './support/site.ts';
import { episodesBench, FULL_EPISODES, QUICK_EPISODES, type EpisodesFigures, type EpisodesPlan } from './episodes.ts';
import { storeBench, type StoreFigures } from './store.ts';
import { coldOpenBench, type ColdOpenFigures } from './cold-open.ts';
import { FULL_SCALE, QUICK_SCALE, scaleBench, type ScaleFigures, type ScalePlan } from './scale.ts';
import { median, percentile, round } from './support/stats.ts';
import { FULL_IMPORT, QUICK_IMPORT, importBench, type ImportFigures, type ImportPlan } from './imports.ts';
import { FULL_DEAD, QUICK_DEAD, deadServerBench, type DeadFigures, type DeadPlan } from './dead-server.ts';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const TOKEN = 'demo-token';
const PAGE_SIZE = 500;
/** The engine's time overlap before its cursor (worker/opa/transport.ts PULL_OVERLAP) when the newest entries are sparse. */
const OVERLAP_MS = 2000;
const MB = 1024 * 1024;
/** Worker names (the `name` given to `new Worker`): the engine's and the baseline's. */
const ENGINE_WORKER = 'opa-sync';
const BASELINE_WORKER = 'opa-bench-baseline';

export type SizeKey = 'n1k' | 'n10k' | 'n100k';
export type Section = 'pull' | 'incremental' | 'open' | 'replay' | 'import' | 'dead' | 'episodes' | 'store' | 'scale' | 'size';
export const SECTIONS: readonly Section[] = ['pull', 'incremental', 'open', 'replay', 'import', 'dead', 'episodes', 'store', 'scale', 'size'];

/** What to run. */
export interface BenchPlan {
  mode: 'full' | 'quick';
  /** Initial pulls: the JSON key, the number of subscriptions, runs (engine and baseline each). */
  initial: { key: SizeKey; n: number; runs: number }[];
  /** Which size's engine runs give the main thread's longest task, and which the worker's peak heap. */
  longTaskFrom: SizeKey;
  memoryFrom: SizeKey;
  incremental: { n: number; reps: number; changes: number; afterBulk: boolean };
  updates: number;
  replay: { subscriptions: number; changes: number; latencyMs: number; runs: number };
  /** The same offline replay against the gPodder reference server (mygpo): toggles only, as gPodder carries them. */
  gpodderReplay: { subscriptions: number; changes: number; latencyMs: number; runs: number };
  /** Listening state (gPodder server, mygpo): first sync, simulated playback, offline progress. */
  episodes: EpisodesPlan;
  /** Cold opens of a cached list: `rows` subscriptions, `runs` of the library's page and of the raw one each. */
  coldOpen: { rows: number; runs: number };
  /** Scale (Chromium): busy time while playing (`seconds` of a setProgress each second, a store of a feed of `episodes`), and a store of `subscriptions` rows. */
  scale: ScalePlan;
  /** A library brought in: importOpml and addMany of many feeds offline, the reconnect's requests (issue 33). */
  import: ImportPlan;
  /** A burst of adds against a dead server with a long backoff: the requests it is sent (issue 31). */
  dead: DeadPlan;
}

export const FULL_PLAN: BenchPlan = {
  mode: 'full',
  initial: [
    { key: 'n1k', n: 1_000, runs: 7 },
    { key: 'n10k', n: 10_000, runs: 5 },
    { key: 'n100k', n: 100_000, runs: 3 },
  ],
  longTaskFrom: 'n10k',
  memoryFrom: 'n100k',
  incremental: { n: 10_000, reps: 5, changes: 10, afterBulk: true },
  updates: 200,
  replay: { subscriptions: 100, changes: 1_000, latencyMs: 20, runs: 3 },
  gpodderReplay: { subscriptions: 100, changes: 1_000, latencyMs: 20, runs: 3 },
  episodes: FULL_EPISODES,
  coldOpen: { rows: 300, runs: 9 },
  scale: FULL_SCALE,
  import: FULL_IMPORT,
  dead: FULL_DEAD,
};

/** Tiny sizes, one run each: checks the harness end to end in well under a minute. */
export const QUICK_PLAN: BenchPlan = {
  mode: 'quick',
  initial: [
    { key: 'n1k', n: 100, runs: 1 },
    { key: 'n10k', n: 500, runs: 1 },
    { key: 'n100k', n: 2_000, runs: 1 },
  ],
  longTaskFrom: 'n10k',
  memoryFrom: 'n100k',
  incremental: { n: 500, reps: 1, changes: 10, afterBulk: false },
  updates: 20,
  replay: { subscriptions: 10, changes: 100, latencyMs: 20, runs: 1 },
  gpodderReplay: { subscriptions: 10, changes: 100, latencyMs: 20, runs: 1 },
  episodes: QUICK_EPISODES,
  coldOpen: { rows: 300, runs: 1 },
  scale: QUICK_SCALE,
  import: QUICK_IMPORT,
  dead: QUICK_DEAD,
};

export interface InitialPullFigure {
  n: number;
  runs: number;
  /** Medians of the runs. */
  engineMs: number;
  baselineMs: number;
  /** engineMs / baselineMs (ratio of the medians). */
  ratio: number;
  /** Median of the per-run engine/baseline ratios (runs are paired: same data, back to back). */
  pairedRatio: number;
  entriesPerSec: number;
  baselineEntriesPerSec: number;
  /** GET /subscriptions per pull, engine and baseline; CORS preflights (OPTIONS) counted apart. */
  requests: number;
  baselineRequests: number;
  preflights: number;
  engineRunsMs: number[];
  baselineRunsMs: number[];
}

export interface PullCostFigure {
  /** GET /subscriptions requests the server saw (CORS preflights not counted). */
  requests: number;
  ms: number;
  preflights: number;
  msRuns: number[];
}

export interface BenchResult {
  meta: {
    mode: BenchPlan['mode'];
    startedAt: string;
    wallMs: number;
    commit: string;
    /** Uncommitted changes under src/ and worker/ when the bench ran (the figures are of the tree as it was). */
    dirty: string[];
    node: string;
    /** The engine and its version; whether its IndexedDB was on disk (WebKitGTK's automation sessions keep it in memory). */
    browser: EngineName;
    browserVersion: string;
    onDisk: boolean;
    /** Databases whose deletion between runs never finished (left behind; each run has its own). */
    stuckDeletes: string[];
    cpus: number;
    loadAvgStart: number[];
    loadAvgEnd: number[];
    pageSize: number;
    sections: Section[];
  };
  initialPull: Partial<Record<SizeKey, InitialPullFigure>>;
  incrementalPull?: {
    n: number;
    noChange: PullCostFigure;
    tenChanges: PullCostFigure & { changes: number };
    /** No change, right after a bulk of entries 1 ms apart (seeding): the overlap is then counted in entries (the 100 newest), not 2 s of them. */
    noChangeAfterBulk?: PullCostFigure;
  };
  updateLatency?: {
    p50Ms?: number;
    p95Ms?: number;
    maxMs?: number;
    updates?: number;
    /** Median over the longTaskFrom-size engine pulls of each pull's longest main-thread 'longtask' (0: none ≥ 50 ms). */
    longestTaskMs?: number;
    longestTaskWorstMs?: number;
    longTaskPullSize?: number;
    /** Median of each pull's largest lateness of a 10 ms timer loop on the page (also counts time the OS took the CPU away). */
    maxLoopGapMs?: number;
    /**
     * The platform's limit, interleaved with the updates (one after each): the page posts to a plain dedicated
     * worker, which does one raw IndexedDB `put` in a `readwrite` transaction and answers on `complete`.
     */
    rawP50Ms?: number;
    rawP95Ms?: number;
    /** p50 / rawP50 and p95 / rawP95. */
    p50Ratio?: number;
    p95Ratio?: number;
    /**
     * The least edit, interleaved too (`edit` in pages/raw-write-worker.ts): one `readwrite` transaction reads the
     * row, its queued changes and the store's owner, then writes the row and a queue entry.
     */
    editP50Ms?: number;
    editP95Ms?: number;
    /** editP50 / rawP50 and editP95 / rawP95: where the design's rules alone put an edit against a bare write. */
    editFloorP50Ratio?: number;
    editFloorP95Ratio?: number;
  };
  replay?: {
    changes: number;
    subscriptions: number;
    /** Queue entries after coalescing, before going online. */
    queued: number;
    /** Push requests the server saw after going online (the changes sent); medians of the runs. */
    requests: number;
    patches: number;
    /** Every request after going online: the push's plus the pull's GET /subscriptions (sync = pull, then push). */
    totalRequests: number;
    preflights: number;
    ms: number;
    msRuns: number[];
    latencyMs: number;
  };
  /** `replay`'s offline queue replayed to a gPodder server (mygpo dialect, `/api/2`): subscribe/unsubscribe toggles. */
  gpodderReplay?: {
    changes: number;
    subscriptions: number;
    queued: number;
    /** Subscription uploads (POST) after going online; medians of the runs. */
    requests: number;
    /** Every request after going online: uploads plus the pulls' GETs (the sync before the push, and the one after an upload). */
    totalRequests: number;
    /** URLs in the uploads' add and remove lists (median of the runs). */
    urlsSent: number;
    ms: number;
    msRuns: number[];
    latencyMs: number;
  };
  memory?: {
    /** Median over the memoryFrom-size engine pulls of the worker's peak used JS heap (CDP Runtime.getHeapUsage, 25 ms samples). */
    peakHeapMB: number;
    peakHeapMaxMB: number;
    baselinePeakHeapMB: number;
    n: number;
    method: string;
  };
  /** Listening state against a gPodder server (mygpo): first sync vs a naive baseline, an hour of playback (simulated time), offline progress. */
  episodes?: EpisodesFigures;
  /** client.store() in a React app (Chromium only): edit → DOM, and snapshots during a first sync. */
  store?: StoreFigures;
  /** A new tab's open of 300 cached subscriptions: the library's page against a raw IndexedDB page. */
  coldOpen?: ColdOpenFigures;
  /** Chromium: busy time while playing with a feed's store mounted, and a large store's own time per change. */
  scale?: ScaleFigures;
  /** importOpml / addMany of many feeds from the page against one bulkPut in a worker; the reconnect's requests. */
  import?: ImportFigures;
  /** Requests a dead server is sent during a burst of adds, with a long backoff. */
  deadServer?: DeadFigures;
  size?: SizeResult;
  targets: TargetCheck[];
}

export interface TargetCheck {
  name: string;
  key: string;
  value: number | undefined;
  target: string;
  ok: boolean | undefined;
}

export interface BenchOptions {
  plan: BenchPlan;
  browser: EngineName;
  sections?: readonly Section[];
  /** Limit the initial pull sizes (the keys). */
  sizes?: readonly SizeKey[];
  /** Build the size figures from a fresh copy even when dist/ exists. */
  ownBuildForSize?: boolean;
  /** Progress lines. */
  log?: (line: string) => void;
}

const mb = (bytes: number): string => (Number.isFinite(bytes) ? `${(bytes / MB).toFixed(1)} MB` : '– (no sample)');
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function listRequests(log: RequestLogEntry[]) {
  const real = log.filter((e) => e.method !== 'OPTIONS');
  return {
    gets: real.filter((e) => e.method === 'GET' && e.path === '/v1/subscriptions').length,
    real: real.length,
    patches: real.filter((e) => e.method === 'PATCH').length,
    /** What a push sends: everything but the pull's list requests. */
    push: real.filter((e) => !(e.method === 'GET' && e.path === '/v1/subscriptions')).length,
    preflights: log.length - real.length,
  };
}

function gitInfo(): { commit: string; dirty: string[] } {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'worker'], { cwd: repo, encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map((l) => l.trim());
    return { commit, dirty };
  } catch {
    return { commit: 'unknown', dirty: [] };
  }
}

function pullArgs(server: { url: string }, label: string): PullArgs {
  return { baseUrl: server.url, token: TOKEN, dbName: `opa-bench-${label}-${randomUUID().slice(0, 8)}`, pageSize: PAGE_SIZE };
}

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await sleep(20);
  }
}

// ---- initial pull, main-thread responsiveness, worker heap ----------------------------------------------------

/** Delete a run's database; one that does not go within 30 s is counted in the figures and left behind. */
async function dropDb(page: BrowserPage, name: string, result: BenchResult, log: (l: string) => void): Promise<void> {
  if (await call(page, 'deleteDb', name, 30_000)) return;
  result.meta.stuckDeletes.push(name);
  log(`  warning: deleting ${name} did not finish within 30 s (blocked by a connection still open?); going on`);
}

/** The worker heap sampler: CDP, so Chromium only; other engines report no heap figure. */
async function heapSampler(page: BrowserPage): Promise<HeapSampler> {
  const pw = playwrightPage(page);
  if (pw) return sampleWorkerHeaps(pw);
  const none = { peakUsed: {}, peakTotal: {}, samples: 0 };
  return { reset() {}, snapshot: () => none, stop: async () => none };
}

interface EngineRun {
  ms: number;
  requests: number;
  preflights: number;
  /** null where the engine has no 'longtask' entries. */
  longestTaskMs: number | null;
  maxLoopGapMs: number;
  peakUsed: number;
}

async function initialPulls(browser: BenchBrowser, plan: BenchPlan, sizes: BenchPlan['initial'], result: BenchResult, log: (l: string) => void) {
  const engineRunsBySize = new Map<SizeKey, EngineRun[]>();
  const baselinePeaks = new Map<SizeKey, number[]>();
  let warmedUp = false;
  for (const { key, n, runs } of sizes) {
    const server = await startServer({ port: 0, seed: n });
    const page = await browser.openPage();
    const heap = await heapSampler(page);
    try {
      if (!warmedUp) {
        // JIT, disk caches and the first worker spawn: not measured.
        const warm = Math.min(n, 1000);
        const warmServer = await startServer({ port: 0, seed: warm });
        for (const kind of ['enginePull', 'baselinePull'] as const) {
          const args = pullArgs(warmServer, 'warm');
          await call(page, kind, args);
          await dropDb(page, args.dbName, result, log);
        }
        await warmServer.close();
        warmedUp = true;
      }
      const engine: EngineRun[] = [];
      const baseline: { ms: number; requests: number; peakUsed: number }[] = [];
      for (let i = 0; i < runs; i++) {
        // Paired runs on the same data, alternating which goes first.
        for (const kind of i % 2 === 0 ? (['engine', 'baseline'] as const) : (['baseline', 'engine'] as const)) {
          const args = pullArgs(server, `${kind}-${key}-${i}`);
          server.clearLog();
          heap.reset();
          if (kind === 'engine') {
            const r = await call(page, 'enginePull', args);
            if (r.count !== n) throw new Error(`bench: the engine stored ${r.count} of ${n} subscriptions`);
            const reqs = listRequests(server.log());
            const peakUsed = heap.snapshot().peakUsed[ENGINE_WORKER] ?? NaN;
            engine.push({ ms: r.ms, requests: reqs.gets, preflights: reqs.preflights, longestTaskMs: r.longestTaskMs, maxLoopGapMs: r.maxLoopGapMs, peakUsed });
            log(`  initialPull ${key} run ${i + 1}/${runs} engine   ${r.ms.toFixed(0)} ms, ${reqs.gets} requests, heap ${mb(peakUsed)}, longtask ${r.longestTaskMs === null ? '–' : `${r.longestTaskMs.toFixed(0)} ms`}`);
          } else {
            const r = await call(page, 'baselinePull', args);
            if (r.count !== n) throw new Error(`bench: the baseline stored ${r.count} of ${n} subscriptions`);
            const peakUsed = heap.snapshot().peakUsed[BASELINE_WORKER] ?? NaN;
            baseline.push({ ms: r.ms, requests: r.requests, peakUsed });
            log(`  initialPull ${key} run ${i + 1}/${runs} baseline ${r.ms.toFixed(0)} ms, ${r.requests} requests, heap ${mb(peakUsed)}`);
          }
          await dropDb(page, args.dbName, result, log);
          // Let the storage backend settle after deleting a big database.
          await sleep(n >= 50_000 ? 1000 : 100);
        }
      }
      const engineMs = median(engine.map((r) => r.ms));
      const baselineMs = median(baseline.map((r) => r.ms));
      result.initialPull[key] = {
        n,
        runs,
        engineMs: round(engineMs),
        baselineMs: round(baselineMs),
        ratio: round(engineMs / baselineMs, 3),
        pairedRatio: round(median(engine.map((r, i) => r.ms / baseline[i]!.ms)), 3),
        entriesPerSec: Math.round(n / (engineMs / 1000)),
        baselineEntriesPerSec: Math.round(n / (baselineMs / 1000)),
        requests: median(engine.map((r) => r.requests)),
        baselineRequests: median(baseline.map((r) => r.requests)),
        preflights: median(engine.map((r) => r.preflights)),
        engineRunsMs: engine.map((r) => round(r.ms)),
        baselineRunsMs: baseline.map((r) => round(r.ms)),
      };
      engineRunsBySize.set(key, engine);
      baselinePeaks.set(key, baseline.map((r) => r.peakUsed));
    } finally {
      await heap.stop();
      await page.close();
      await server.close();
    }
  }

  const lt = engineRunsBySize.get(plan.longTaskFrom);
  if (lt) {
    const tasks = lt.map((r) => r.longestTaskMs).filter((t): t is number => t !== null);
    result.updateLatency = {
      ...result.updateLatency,
      ...(tasks.length ? { longestTaskMs: round(median(tasks)), longestTaskWorstMs: round(Math.max(...tasks)) } : {}),
      longTaskPullSize: result.initialPull[plan.longTaskFrom]!.n,
      maxLoopGapMs: round(median(lt.map((r) => r.maxLoopGapMs))),
    };
  }
  const mem = engineRunsBySize.get(plan.memoryFrom);
  if (mem && mem.some((r) => Number.isFinite(r.peakUsed))) {
    result.memory = {
      peakHeapMB: round(median(mem.map((r) => r.peakUsed)) / MB),
      peakHeapMaxMB: round(Math.max(...mem.map((r) => r.peakUsed)) / MB),
      baselinePeakHeapMB: round(median(baselinePeaks.get(plan.memoryFrom)!) / MB),
      n: result.initialPull[plan.memoryFrom]!.n,
      method:
        'CDP: auto-attach to the page\'s dedicated workers, Runtime.getHeapUsage (usedSize) every 25 ms during each pull; median of the per-pull peaks',
    };
  }
}

// ---- incremental pulls and update latency ---------------------------------------------------------------------

async function timedSyncs(page: BrowserPage, server: RefServer, reps: number, before?: (rep: number) => Promise<void> | void): Promise<PullCostFigure> {
  const ms: number[] = [];
  const gets: number[] = [];
  const preflights: number[] = [];
  for (let rep = 0; rep < reps; rep++) {
    await before?.(rep);
    server.clearLog();
    const r = await call(page, 'sync');
    const reqs = listRequests(server.log());
    ms.push(r.ms);
    gets.push(reqs.gets);
    preflights.push(reqs.preflights);
  }
  return { requests: median(gets), ms: round(median(ms)), preflights: median(preflights), msRuns: ms.map((x) => round(x)) };
}

async function incremental(browser: BenchBrowser, plan: BenchPlan, result: BenchResult, log: (l: string) => void) {
  const { n, reps, changes, afterBulk } = plan.incremental;
  const figures: NonNullable<BenchResult['incrementalPull']> = { n } as NonNullable<BenchResult['incrementalPull']>;

  if (afterBulk) {
    const server = await startServer({ port: 0, seed: n });
    const page = await browser.openPage();
    const args = pullArgs(server, 'bulk');
    try {
      await call(page, 'open', args);
      await call(page, 'sync');
      figures.noChangeAfterBulk = await timedSyncs(page, server, reps);
      log(`  incrementalPull noChangeAfterBulk: ${figures.noChangeAfterBulk.requests} requests, ${figures.noChangeAfterBulk.ms} ms`);
      await call(page, 'close');
      await dropDb(page, args.dbName, result, log);
    } finally {
      await page.close();
      await server.close();
    }
  }

  const server = await startServer({ port: 0, seed: n });
  const seededAt = Date.now();
  const page = await browser.openPage();
  const args = pullArgs(server, 'incremental');
  try {
    // Seeding writes n entries 1 ms apart ending now; a real account's newest changes are sparse. One change
    // made later than the engine's overlap window puts the cursor where nothing else is within 2 s of it.
    await sleep(Math.max(0, OVERLAP_MS + 100 - (Date.now() - seededAt)));
    const state = server.state();
    server.foreign.patch(state[0]!.guid, { is_subscribed: !state[0]!.is_subscribed });
    await call(page, 'open', args);
    await call(page, 'sync');
    figures.noChange = await timedSyncs(page, server, reps);
    log(`  incrementalPull noChange: ${figures.noChange.requests} requests, ${figures.noChange.ms} ms`);

    let next = 1;
    const patched: { guid: string; isSubscribed: boolean }[][] = [];
    const ten = await timedSyncs(page, server, reps, (rep) => {
      patched[rep] = [];
      for (let k = 0; k < changes; k++) {
        const entry = state[next++]!;
        server.foreign.patch(entry.guid, { is_subscribed: !entry.is_subscribed });
        patched[rep]!.push({ guid: entry.guid, isSubscribed: !entry.is_subscribed });
      }
    });
    for (const { guid, isSubscribed } of patched.flat()) {
      const local = await call(page, 'subscription', guid);
      if (local?.isSubscribed !== isSubscribed) throw new Error(`bench: the pull did not bring a foreign change to ${guid}`);
    }
    figures.tenChanges = { ...ten, changes };
    log(`  incrementalPull tenChanges: ${ten.requests} requests, ${ten.ms} ms`);
    result.incrementalPull = figures;

    // Update latency on the same synced store: distinct subscriptions, each flag flipped once.
    const plan200 = state.slice(-plan.updates).map((e) => ({ guid: e.guid, change: { isSubscribed: !e.is_subscribed } }));
    const { engine: latencies, raw, edit } = await call(page, 'updatesWithRaw', plan200, `${args.dbName}-raw`);
    const [p50, p95, raw50, raw95, edit50, edit95] = [percentile(latencies, 50), percentile(latencies, 95), percentile(raw, 50), percentile(raw, 95), percentile(edit, 50), percentile(edit, 95)];
    result.updateLatency = {
      ...result.updateLatency,
      p50Ms: round(p50, 2),
      p95Ms: round(p95, 2),
      maxMs: round(Math.max(...latencies), 2),
      updates: latencies.length,
      rawP50Ms: round(raw50, 2),
      rawP95Ms: round(raw95, 2),
      p50Ratio: round(p50 / raw50, 2),
      p95Ratio: round(p95 / raw95, 2),
      editP50Ms: round(edit50, 2),
      editP95Ms: round(edit95, 2),
      editFloorP50Ratio: round(edit50 / raw50, 2),
      editFloorP95Ratio: round(edit95 / raw95, 2),
    };
    const u = result.updateLatency;
    log(`  updateLatency: p50 ${u.p50Ms} ms, p95 ${u.p95Ms} ms over ${latencies.length}; raw write round trip p50 ${u.rawP50Ms} ms, p95 ${u.rawP95Ms} ms; ratio ${u.p50Ratio} / ${u.p95Ratio}`);
    log(`  the least edit: p50 ${u.editP50Ms} ms, p95 ${u.editP95Ms} ms; to a raw write ${u.editFloorP50Ratio} / ${u.editFloorP95Ratio}`);
    await waitUntil('the updates to be pushed', async () => (await call(page, 'pendingCount')) === 0, 60_000);
    for (const { guid, change } of plan200) {
      if (server.entry(guid)?.is_subscribed !== change.isSubscribed) throw new Error(`bench: update of ${guid} did not reach the server`);
    }
    await call(page, 'close');
    await dropDb(page, args.dbName, result, log);
    await dropDb(page, `${args.dbName}-raw`, result, log);
  } finally {
    await page.close();
    await server.close();
  }
}

// ---- replay of an offline queue ------------------------------------------------------------------------------

/** What a server logged, for `offlineReplay`. */
interface LoggingServer {
  log(): RequestLogEntry[];
  clearLog(): void;
}

/**
 * Take the page offline, make `edits` there (checking nothing goes out), go online and time the queue's drain.
 * Resolves with the drain time, the queue's length before it, and the requests the server saw after going online.
 */
async function offlineReplay(browser: BenchBrowser, page: BrowserPage, server: LoggingServer, edits: Parameters<BenchApi['updates']>[0]) {
  await browser.context.setOffline(true);
  await waitUntil('the worker to see the page offline', async () => !(await call(page, 'status')).online);
  server.clearLog();
  await call(page, 'updates', edits);
  const sentOffline = server.log().filter((e) => e.method !== 'OPTIONS').length;
  if (sentOffline) throw new Error(`bench: ${sentOffline} requests went out while offline`);
  const queued = await call(page, 'pendingCount');
  server.clearLog();
  await browser.context.setOffline(false);
  const ms = await call(page, 'drainedAfterOnline', 60_000);
  return { ms, queued, log: server.log() };
}

async function replay(browser: BenchBrowser, plan: BenchPlan, result: BenchResult, log: (l: string) => void) {
  const { subscriptions, changes, latencyMs, runs } = plan.replay;
  const server = await startServer({ port: 0, seed: subscriptions, latencyMs });
  const page = await browser.openPage();
  const { context } = browser;
  const rows: { ms: number; requests: number; total: number; patches: number; preflights: number; queued: number }[] = [];
  try {
    for (let run = 0; run < runs; run++) {
      const args = pullArgs(server, `replay-${run}`);
      await call(page, 'open', args);
      await call(page, 'sync');
      const guids = server.state().map((e) => e.guid);
      // `changes` edits spread over the subscriptions: flags flipped, feed addresses moved.
      const expected = new Map<string, { feedUrl?: string; isSubscribed?: boolean }>();
      const edits = Array.from({ length: changes }, (_, i) => {
        const guid = guids[i % guids.length]!;
        const change = i % 3 === 0 ? { feedUrl: `https://replay.example/r${run}/${i}/feed.xml` } : { isSubscribed: i % 2 === 0 };
        expected.set(guid, { ...expected.get(guid), ...change });
        return { guid, change };
      });
      const { ms, queued, log: after } = await offlineReplay(browser, page, server, edits);
      const reqs = listRequests(after);
      for (const [guid, want] of expected) {
        const got = server.entry(guid);
        if (!got || (want.feedUrl !== undefined && got.feed_url !== want.feedUrl) || (want.isSubscribed !== undefined && got.is_subscribed !== want.isSubscribed)) {
          throw new Error(`bench: after replay the server's ${guid} is not what was queued`);
        }
      }
      rows.push({ ms, requests: reqs.push, total: reqs.real, patches: reqs.patches, preflights: reqs.preflights, queued });
      log(`  replay run ${run + 1}/${runs}: ${changes} changes → ${queued} queued → ${reqs.push} push requests (${reqs.patches} PATCH) + ${reqs.real - reqs.push} pull GET, drained in ${ms.toFixed(0)} ms`);
      await call(page, 'close');
      await dropDb(page, args.dbName, result, log);
    }
  } finally {
    await context.setOffline(false).catch(() => undefined);
    await page.close();
    await server.close();
  }
  result.replay = {
    changes,
    subscriptions,
    queued: median(rows.map((r) => r.queued)),
    requests: median(rows.map((r) => r.requests)),
    patches: median(rows.map((r) => r.patches)),
    totalRequests: median(rows.map((r) => r.total)),
    preflights: median(rows.map((r) => r.preflights)),
    ms: round(median(rows.map((r) => r.ms))),
    msRuns: rows.map((r) => round(r.ms)),
    latencyMs,
  };
}

/** Uploads and list reads a gPodder server saw (mygpo's `/api/2/subscriptions/{user}/{device}.json`). */
function gpodderRequests(log: RequestLogEntry[]) {
  const subs = log.filter((e) => e.path.startsWith('/api/2/subscriptions/'));
  const uploads = subs.filter((e) => e.method === 'POST');
  const urls = uploads.reduce((n, e) => {
    const body = e.body as { add?: unknown[]; remove?: unknown[] } | undefined;
    return n + (body?.add?.length ?? 0) + (body?.remove?.length ?? 0);
  }, 0);
  return { uploads: uploads.length, urls, real: log.filter((e) => e.method !== 'OPTIONS').length };
}

async function gpodderReplay(browser: BenchBrowser, plan: BenchPlan, result: BenchResult, log: (l: string) => void) {
  const { subscriptions, changes, latencyMs, runs } = plan.gpodderReplay;
  const username = 'alice';
  const password = 'alice-password';
  const server = await startGpodderServer({ port: 0, users: { [username]: password }, latencyMs });
  const page = await browser.openPage();
  const { context } = browser;
  const rows: { ms: number; uploads: number; total: number; urls: number; queued: number }[] = [];
  try {
    for (let run = 0; run < runs; run++) {
      // A device of its own per run, its list seeded as another client of the account left it (mygpo keeps a list per device).
      const device = `bench-replay-${run}`;
      const urls = server.seed(subscriptions, { device });
      const args: PullArgs = { ...pullArgs(server, `gpodder-replay-${run}`), token: password, gpodder: { username, device } };
      await call(page, 'open', args);
      await call(page, 'sync');
      // `changes` toggles over the feeds: feed j's k-th change flips it, so each is toggled changes/subscriptions times;
      // the even feeds end subscribed, the odd ones unsubscribed.
      const expected = new Map<string, boolean>();
      const edits = Array.from({ length: changes }, (_, i) => {
        const j = i % urls.length;
        const k = Math.floor(i / urls.length);
        const isSubscribed = (j + k) % 2 === 1;
        expected.set(urls[j]!, isSubscribed);
        return { guid: urls[j]!, change: { isSubscribed } };
      });
      const { ms, queued, log: after } = await offlineReplay(browser, page, server, edits);
      const reqs = gpodderRequests(after);
      const held = new Set(server.subscribed({ device }));
      for (const [url, want] of expected) {
        if (held.has(url) !== want) throw new Error(`bench: after the gPodder replay ${url} is ${held.has(url) ? '' : 'not '}subscribed on the server`);
      }
      rows.push({ ms, uploads: reqs.uploads, total: reqs.real, urls: reqs.urls, queued });
      log(`  gpodderReplay run ${run + 1}/${runs}: ${changes} changes → ${queued} queued → ${reqs.uploads} upload(s) of ${reqs.urls} URLs, ${reqs.real} requests in all, drained in ${ms.toFixed(0)} ms`);
      await call(page, 'close');
      await dropDb(page, args.dbName, result, log);
    }
  } finally {
    await context.setOffline(false).catch(() => undefined);
    await page.close();
    await server.close();
  }
  result.gpodderReplay = {
    changes,
    subscriptions,
    queued: median(rows.map((r) => r.queued)),
    requests: median(rows.map((r) => r.uploads)),
    totalRequests: median(rows.map((r) => r.total)),
    urlsSent: median(rows.map((r) => r.urls)),
    ms: round(median(rows.map((r) => r.ms))),
    msRuns: rows.map((r) => round(r.ms)),
    latencyMs,
  };
}

// ---- targets -------------------------------------------------------------------------------------------------

function check(name: string, key: string, value: number | undefined, target: string, ok: (v: number) => boolean): TargetCheck {
  return { name, key, value, target, ok: value === undefined || Number.isNaN(value) ? undefined : ok(value) };
}

/** The issue's targets, checked against the figures (undefined: not measured in this run). */
export function checkTargets(r: BenchResult): TargetCheck[] {
  return [
    check('initial pull 10k, engine/baseline', 'initialPull.n10k.ratio', r.initialPull.n10k?.ratio, '≤ 1.0', (v) => v <= 1),
    check('initial pull 100k, engine/baseline', 'initialPull.n100k.ratio', r.initialPull.n100k?.ratio, '≤ 1.0', (v) => v <= 1),
    check('incremental pull, nothing changed', 'incrementalPull.noChange.requests', r.incrementalPull?.noChange.requests, '= 1 request', (v) => v === 1),
    check('incremental pull right after a bulk import, nothing changed', 'incrementalPull.noChangeAfterBulk.requests', r.incrementalPull?.noChangeAfterBulk?.requests, '= 1 request', (v) => v === 1),
    check('update() until durable / raw write round trip, p50', 'updateLatency.p50Ratio', r.updateLatency?.p50Ratio, '≤ 1.3', (v) => v <= 1.3),
    check('update() until durable / raw write round trip, p95', 'updateLatency.p95Ratio', r.updateLatency?.p95Ratio, '≤ 2.0', (v) => v <= 2),
    check('longest main-thread task in a pull', 'updateLatency.longestTaskMs', r.updateLatency?.longestTaskMs, '< 50 ms', (v) => v < 50),
    check('replay push requests', 'replay.requests', r.replay?.requests, '≤ 100', (v) => v <= 100),
    check('replay time at 20 ms latency', 'replay.ms', r.replay?.ms, '< 2000 ms', (v) => v < 2000),
    check('gPodder replay uploads', 'gpodderReplay.requests', r.gpodderReplay?.requests, '= 1 request', (v) => v === 1),
    check('episodes: first sync of episode states / naive worker', 'episodes.firstSync.ratio', r.episodes?.firstSync.ratio, '≤ 1.1', (v) => v <= 1.1),
    check('cold open of 300 cached subscriptions / raw IndexedDB page', 'coldOpen.ratio', r.coldOpen?.ratio, '≤ 2.0', (v) => v <= 2),
    check('setProgress each second, a 3,000-episode store mounted: main-thread busy ms per second, p95', 'scale.playback.main.p95Ms', r.scale?.playback.main.p95Ms, '≤ 2 ms', (v) => v <= 2),
    check('the same, worker busy ms per second, p95', 'scale.playback.worker.p95Ms', r.scale?.playback.worker.p95Ms, '≤ 5 ms', (v) => v <= 5),
    check('store of 10,000 subscriptions: change event → new snapshot, p95', 'scale.largeStore.total.p95Ms', r.scale?.largeStore.total.p95Ms, '≤ 4 ms', (v) => v <= 4),
    check('episodes: uploads per hour of playback, a setProgress each second (simulated time)', 'episodes.playback.uploadsPerHour', r.episodes?.playback.uploadsPerHour, '≤ 120 / hour', (v) => v <= 120),
    check('episodes: uploads after 1,000 offline progress changes over 50 episodes', 'episodes.offline.uploads', r.episodes?.offline.uploads, '= 1 upload', (v) => v === 1),
    check('episodes: actions in that upload', 'episodes.offline.actionsSent', r.episodes?.offline.actionsSent, '= 1 per episode', (v) => v === r.episodes?.offline.episodes),
    check("another tab's edit → React DOM (200 rows, store at rest), p95", 'store.small.otherTab.p95Ms', r.store?.small.otherTab.p95Ms, '≤ 17 ms', (v) => v <= 17),
    check('importOpml of 1,000 feeds → all rows in the store / one bulkPut in a worker', 'import.importOpml.ratio', r.import?.importOpml.ratio, '≤ 1.5', (v) => v <= 1.5),
    check('addMany of 1,000 feeds → all rows in the store / one bulkPut in a worker', 'import.addMany.ratio', r.import?.addMany.ratio, '≤ 1.5', (v) => v <= 1.5),
    check("the store's snapshots during the import", 'import.importOpml.snapshots', r.import?.importOpml.snapshots, '= 1', (v) => v === 1),
    check("the store's snapshots during addMany", 'import.addMany.snapshots', r.import?.addMany.snapshots, '= 1', (v) => v === 1),
    check('1,000 feeds imported offline: requests on reconnect (OPA)', 'import.reconnect.opa.requests', r.import?.reconnect.opa.requests, '≤ 20', (v) => v <= 20),
    check('the same, gPodder uploads', 'import.reconnect.gpodder.requests', r.import?.reconnect.gpodder.requests, '≤ 1', (v) => v <= 1),
    check('40 adds over 0.5 s against a dead server, long backoff: requests (OPA)', 'deadServer.opa.requests', r.deadServer?.opa.requests, '≤ 2', (v) => v <= 2),
    check('the same, gPodder', 'deadServer.gpodder.requests', r.deadServer?.gpodder.requests, '≤ 2', (v) => v <= 2),
    check('worker peak heap, 100k pull', 'memory.peakHeapMB', r.memory?.peakHeapMB, '< 64 MB', (v) => v < 64),
    // One budget for the page, the store included (issue 27); the worker's is the engine's own share, Dexie and comlink apart.
    check('page entry with the store, gzip', 'size.pageGzipBytes', r.size?.pageGzipBytes, '≤ 5 KiB', (v) => v <= 5 * 1024),
    check("engine's own share of the worker bundle, gzip", 'size.workerOwnGzipBytes', r.size?.workerOwnGzipBytes, '≤ 32 KiB', (v) => v <= 32 * 1024),
  ];
}

// ---- the run -------------------------------------------------------------------------------------------------

/** Run the benchmark plan; resolves with every figure (throws when a run is not correct: counts, states). */
export async function runBench(options: BenchOptions): Promise<BenchResult> {
  const { plan } = options;
  const log = options.log ?? (() => undefined);
  const sections = [...(options.sections ?? SECTIONS)];
  const started = Date.now();
  const git = gitInfo();
  const result: BenchResult = {
    meta: {
      mode: plan.mode,
      startedAt: new Date(started).toISOString(),
      wallMs: 0,
      commit: git.commit,
      dirty: git.dirty,
      node: process.version,
      browser: options.browser,
      browserVersion: 'unknown',
      onDisk: false,
      stuckDeletes: [],
      cpus: cpus().length,
      loadAvgStart: loadavg().map((x) => round(x, 2)),
      loadAvgEnd: [],
      pageSize: PAGE_SIZE,
      sections,
    },
    initialPull: {},
    targets: [],
  };

  const needsBrowser = sections.some((s) => s !== 'size');
  if (needsBrowser) {
    log('building the bench page (Vite, production) ...');
    const site = await startSite();
    let browser: BenchBrowser | undefined;
    try {
      browser = await launchBenchBrowser(options.browser, site.url);
      result.meta.browserVersion = browser.version;
      result.meta.onDisk = browser.onDisk;
      if (sections.includes('pull')) {
        const sizes = plan.initial.filter((s) => !options.sizes || options.sizes.includes(s.key));
        log(`initialPull (${sizes.map((s) => `${s.n}×${s.runs}`).join(', ')}; engine and baseline each) ...`);
        await initialPulls(browser, plan, sizes, result, log);
      }
      if (sections.includes('incremental')) {
        log(`incrementalPull and updateLatency (${plan.incremental.n} subscriptions) ...`);
        await incremental(browser, plan, result, log);
      }
      if (sections.includes('open')) {
        log(`coldOpen (${plan.coldOpen.rows} cached subscriptions, ${plan.coldOpen.runs} runs of the library's page and the raw one each) ...`);
        result.coldOpen = await coldOpenBench(browser, plan.coldOpen.rows, plan.coldOpen.runs, (server) => pullArgs(server, 'open'), log);
      }
      if (sections.includes('replay')) {
        log(`replay (${plan.replay.changes} changes over ${plan.replay.subscriptions} subscriptions, ${plan.replay.latencyMs} ms latency) ...`);
        await replay(browser, plan, result, log);
        log(`gpodderReplay (${plan.gpodderReplay.changes} toggles over ${plan.gpodderReplay.subscriptions} feeds, gPodder server, ${plan.gpodderReplay.latencyMs} ms latency) ...`);
        await gpodderReplay(browser, plan, result, log);
      }
      if (sections.includes('import')) {
        const i = plan.import;
        log(`import (${i.feeds} feeds into an account of ${i.existing}, offline, importOpml and addMany ×${i.runs} each against one bulkPut; gPodder ×${i.gpodderRuns}; the reconnect's requests) ...`);
        result.import = await importBench(browser, i, log);
      }
      if (sections.includes('dead')) {
        const d = plan.dead;
        log(`dead (${d.adds} adds over ${d.spanMs} ms against a dead server, backoff ${d.backoffMs / 1000} s, watched ${d.windowMs / 1000} s more; OPA and gPodder ×${d.runs}) ...`);
        result.deadServer = await deadServerBench(browser, d, log);
      }
      if (sections.includes('episodes')) {
        const e = plan.episodes;
        log(`episodes (gPodder server, mygpo: first sync of ${e.firstSync.n} episode states ×${e.firstSync.runs} and baseline; ${e.playbackSeconds} s of playback in simulated time; ${e.offline.changes} offline progress changes over ${e.offline.episodes} episodes) ...`);
        result.episodes = await episodesBench(browser, e, log);
      }
      if (sections.includes('store')) {
        // The framework apps' proof is Chromium's (issue 19); the figures come from there too.
        if (options.browser !== 'chromium') log('store: measured in Chromium only; skipped');
        else {
          log('store (client.store() in a React app: edit → DOM, snapshots during a first sync) ...');
          result.store = await storeBench(browser, plan.mode, log);
        }
      }
      if (sections.includes('scale')) {
        if (options.browser !== 'chromium') log('scale: measured in Chromium only (tracing, CDP); skipped');
        else {
          log(`scale (${plan.scale.seconds} s of setProgress each second with a store of a ${plan.scale.episodes}-episode feed; a store of ${plan.scale.subscriptions} subscriptions) ...`);
          result.scale = await scaleBench(browser, plan.scale, (server) => pullArgs(server, 'scale'), log);
        }
      }
    } finally {
      await browser?.close();
      await site.close();
    }
  }
  if (sections.includes('size')) {
    log('size ...');
    result.size = { ...(await measureSize(options.ownBuildForSize)), swBundle: await measureSwSize() };
    // Where the worker's bytes go (the JSON has every module): the largest shares, gzip.
    for (const m of result.size.workerModules?.slice(0, 12) ?? []) log(`  worker: ${m.source} ${m.gzipBytes} B gzip (${m.bytes} B)`);
  }
  result.targets = checkTargets(result);
  result.meta.loadAvgEnd = loadavg().map((x) => round(x, 2));
  result.meta.wallMs = Date.now() - started;
  return result;
}
