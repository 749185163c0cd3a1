// Listening state (issue 18), against the gPodder reference server in the mygpo dialect (pages of 1,000 actions):
// a first sync of many episode states in the browser, paired with a naive baseline in the same run; an hour of
// playback with a `setProgress` each second, in simulated time in Node (episodes-playback.ts); and offline
// progress changes replayed in the browser.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startGpodderServer } from '../server/gpodder/server.ts';
import type { GpodderServer } from '../server/gpodder/types.ts';
import type { RequestLogEntry } from '../server/types.ts';
import type { BrowserPage } from '../support/browsers.ts';
import type { PlaybackFigures } from './episodes-playback.ts';
import type { PullArgs } from './pages/api.ts';
import { call, type BenchBrowser } from './support/browser.ts';
import { median, round } from './support/stats.ts';

/** What the episodes section runs. */
export interface EpisodesPlan {
  /** First sync: `n` episodes' play actions from another device, over `feeds` feeds, `runs` paired runs. */
  firstSync: { n: number; feeds: number; runs: number };
  /** Simulated seconds of playback, a `setProgress` each. */
  playbackSeconds: number;
  /** Offline progress changes over `episodes` episodes of `feeds` feeds, replayed at `latencyMs`. */
  offline: { changes: number; episodes: number; feeds: number; latencyMs: number; runs: number };
}

/** The episodes section's figures (`episodes` in the JSON). */
export interface EpisodesFigures {
  dialect: 'mygpo';
  firstSync: {
    n: number;
    feeds: number;
    runs: number;
    /** Medians: the engine from `createSyncClient` to `sync()` resolving; the baseline from `new Worker` to done. */
    engineMs: number;
    baselineMs: number;
    /** engineMs / baselineMs, and the median of the per-run ratios. */
    ratio: number;
    pairedRatio: number;
    /** Episode action pulls (GET /api/2/episodes) per first sync: engine and baseline. */
    episodeRequests: number;
    baselineEpisodeRequests: number;
    /** Every request of the engine's first sync (device, subscriptions, episodes; CORS preflights apart). */
    requests: number;
    baselineRequests: number;
    preflights: number;
    engineRunsMs: number[];
    baselineRunsMs: number[];
  };
  /** Simulated time: the engine in Node on a virtual clock (test/chaos/sim.ts). */
  playback: PlaybackFigures;
  offline: {
    changes: number;
    episodes: number;
    /** `status().pendingEpisodes` before going online. */
    queued: number;
    /** Episode uploads (POST /api/2/episodes) after going online, and the actions in them; medians of the runs. */
    uploads: number;
    actionsSent: number;
    /** Every request after going online (the sync's pulls too). */
    totalRequests: number;
    /** From `online` until `pendingEpisodes` is 0. */
    ms: number;
    msRuns: number[];
    latencyMs: number;
    /** A naive client: one upload per change. */
    naiveUploads: number;
  };
}

export const FULL_EPISODES: EpisodesPlan = {
  // A long-used account's history (issue 27): 30,000 episode states over 300 feeds.
  firstSync: { n: 30_000, feeds: 300, runs: 3 },
  playbackSeconds: 3600,
  offline: { changes: 1_000, episodes: 50, feeds: 5, latencyMs: 20, runs: 3 },
};

/** Small and fast (the browser suite's smoke run): still two mygpo pages, still a few throttle intervals. */
export const QUICK_EPISODES: EpisodesPlan = {
  firstSync: { n: 1_500, feeds: 10, runs: 1 },
  playbackSeconds: 300,
  offline: { changes: 100, episodes: 10, feeds: 2, latencyMs: 20, runs: 1 },
};

const USER = 'alice';
const PASSWORD = 'alice-password';
const DEVICE = 'bench-player';
const DAY_MS = 24 * 3600_000;
export const feedUrl = (f: number) => `https://feeds.example/bench-episodes/show-${f}.xml`;
export const mediaUrl = (f: number, e: number) => `https://media.example/bench-episodes/show-${f}/ep-${e}.mp3`;
const naive = (ms: number) => new Date(ms).toISOString().slice(0, 19);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Client options for `server`'s account on this device, on a fresh database. */
export function args(server: GpodderServer, label: string): PullArgs {
  return { baseUrl: server.url, token: PASSWORD, dbName: `opa-bench-episodes-${label}-${randomUUID().slice(0, 8)}`, pageSize: 500, gpodder: { username: USER, device: DEVICE } };
}

/** Requests a gPodder server logged: episode pulls and uploads, the actions uploaded, all of them, preflights. */
function counts(log: RequestLogEntry[]) {
  const real = log.filter((e) => e.method !== 'OPTIONS');
  const episodes = real.filter((e) => e.path.startsWith('/api/2/episodes/'));
  const uploads = episodes.filter((e) => e.method === 'POST');
  return {
    pulls: episodes.filter((e) => e.method === 'GET').length,
    uploads: uploads.length,
    actions: uploads.reduce((n, e) => n + (Array.isArray(e.body) ? e.body.length : 0), 0),
    real: real.length,
    preflights: log.length - real.length,
  };
}

/** A mygpo server whose `feeds` feeds are on this device's list and which holds `n` plays from a phone, a second apart, a day old. */
export async function accountWithHistory(n: number, feeds: number): Promise<GpodderServer> {
  const server = await startGpodderServer({ port: 0, dialect: 'mygpo', users: { [USER]: PASSWORD } });
  server.registerDevice(DEVICE);
  server.foreign.add(Array.from({ length: feeds }, (_, f) => feedUrl(f)), { device: DEVICE });
  // mygpo lists only actions stamped before its clock; one per second, so no page boundary falls inside a second.
  const start = Date.now() - DAY_MS - n * 1000;
  const actions = Array.from({ length: n }, (_, e) => {
    const f = e % feeds;
    const total = 1200 + (e % 50) * 60;
    return { podcast: feedUrl(f), episode: mediaUrl(f, e), guid: `bench-ep-${e}`, device: 'phone', action: 'play', timestamp: naive(start + e * 1000), started: 0, position: e % 3 === 0 ? total : (e * 37) % total, total };
  });
  for (let i = 0; i < actions.length; i += 1000) server.foreign.actions(actions.slice(i, i + 1000));
  return server;
}

async function drop(page: BrowserPage, name: string, log: (l: string) => void): Promise<void> {
  if (!(await call(page, 'deleteDb', name, 30_000))) log(`  warning: deleting ${name} did not finish within 30 s; going on`);
}

async function firstSync(browser: BenchBrowser, plan: EpisodesPlan['firstSync'], log: (l: string) => void): Promise<EpisodesFigures['firstSync']> {
  const { n, feeds, runs } = plan;
  const server = await accountWithHistory(n, feeds);
  const page = await browser.openPage();
  try {
    // JIT, disk caches, the first worker of each kind: not measured.
    const warm = await accountWithHistory(Math.min(n, 1000), feeds);
    for (const kind of ['episodeFirstSync', 'baselineEpisodes'] as const) {
      const a = args(warm, 'warm');
      await call(page, kind, a);
      await drop(page, a.dbName, log);
    }
    await warm.close();
    const engine: { ms: number; pulls: number; real: number; preflights: number }[] = [];
    const baseline: { ms: number; pulls: number; real: number }[] = [];
    for (let i = 0; i < runs; i++) {
      // Paired runs on the same answers, alternating which goes first.
      for (const kind of i % 2 === 0 ? (['engine', 'baseline'] as const) : (['baseline', 'engine'] as const)) {
        const a = args(server, `${kind}-${i}`);
        server.clearLog();
        if (kind === 'engine') {
          const r = await call(page, 'episodeFirstSync', a);
          if (r.count !== n) throw new Error(`bench: the engine stored ${r.count} of ${n} episode states`);
          const c = counts(server.log());
          engine.push({ ms: r.ms, pulls: c.pulls, real: c.real, preflights: c.preflights });
          log(`  episodes firstSync ${n} run ${i + 1}/${runs} engine   ${r.ms.toFixed(0)} ms, ${c.pulls} episode GETs, ${c.real} requests`);
        } else {
          const r = await call(page, 'baselineEpisodes', a);
          if (r.count !== n) throw new Error(`bench: the baseline stored ${r.count} of ${n} episodes`);
          const c = counts(server.log());
          baseline.push({ ms: r.ms, pulls: c.pulls, real: c.real });
          log(`  episodes firstSync ${n} run ${i + 1}/${runs} baseline ${r.ms.toFixed(0)} ms, ${c.pulls} episode GETs, ${c.real} requests`);
        }
        await drop(page, a.dbName, log);
        await sleep(100);
      }
    }
    const engineMs = median(engine.map((r) => r.ms));
    const baselineMs = median(baseline.map((r) => r.ms));
    return {
      n,
      feeds,
      runs,
      engineMs: round(engineMs),
      baselineMs: round(baselineMs),
      ratio: round(engineMs / baselineMs, 3),
      pairedRatio: round(median(engine.map((r, i) => r.ms / baseline[i]!.ms)), 3),
      episodeRequests: median(engine.map((r) => r.pulls)),
      baselineEpisodeRequests: median(baseline.map((r) => r.pulls)),
      requests: median(engine.map((r) => r.real)),
      baselineRequests: median(baseline.map((r) => r.real)),
      preflights: median(engine.map((r) => r.preflights)),
      engineRunsMs: engine.map((r) => round(r.ms)),
      baselineRunsMs: baseline.map((r) => round(r.ms)),
    };
  } finally {
    await page.close();
    await server.close();
  }
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await sleep(20);
  }
}

async function offline(browser: BenchBrowser, plan: EpisodesPlan['offline'], log: (l: string) => void): Promise<EpisodesFigures['offline']> {
  const { changes, episodes, feeds, latencyMs, runs } = plan;
  const server = await startGpodderServer({ port: 0, dialect: 'mygpo', users: { [USER]: PASSWORD }, latencyMs });
  const page = await browser.openPage();
  const rows: { ms: number; queued: number; uploads: number; actions: number; real: number }[] = [];
  try {
    server.registerDevice(DEVICE);
    server.foreign.add(Array.from({ length: feeds }, (_, f) => feedUrl(f)), { device: DEVICE });
    for (let run = 0; run < runs; run++) {
      const a = args(server, `offline-${run}`);
      await call(page, 'open', a);
      await call(page, 'sync');
      // `changes` positions over the episodes, round robin: each episode's last is what must reach the server.
      const ref = (e: number) => ({ podcast: feedUrl(e % feeds), episode: mediaUrl(e % feeds, 100_000 * (run + 1) + e), guid: `bench-offline-${run}-${e}` });
      const plan = Array.from({ length: changes }, (_, i) => ({ ref: ref(i % episodes), position: 10 + i, total: 5000 }));
      const last = new Map(plan.map((p) => [p.ref.episode, p.position]));
      await browser.context.setOffline(true);
      await until('the worker to see the page offline', async () => !(await call(page, 'status')).online);
      server.clearLog();
      await call(page, 'progress', plan);
      const sentOffline = server.log().filter((e) => e.method !== 'OPTIONS').length;
      if (sentOffline) throw new Error(`bench: ${sentOffline} requests went out while offline`);
      const queued = (await call(page, 'status')).pendingEpisodes;
      server.clearLog();
      await browser.context.setOffline(false);
      const ms = await call(page, 'episodesDrainedAfterOnline', 60_000);
      const c = counts(server.log());
      const stored = server.episodeLog().filter((x) => x.device === DEVICE && last.has(x.episode));
      for (const [episode, position] of last) {
        if (stored.filter((x) => x.episode === episode).at(-1)?.position !== position) throw new Error(`bench: the server does not hold ${episode}'s last position ${position}`);
      }
      rows.push({ ms, queued, uploads: c.uploads, actions: c.actions, real: c.real });
      log(`  episodes offline run ${run + 1}/${runs}: ${changes} changes → ${queued} pending → ${c.uploads} upload(s) of ${c.actions} actions, ${c.real} requests in all, drained in ${ms.toFixed(0)} ms`);
      await call(page, 'close');
      await drop(page, a.dbName, log);
    }
  } finally {
    await browser.context.setOffline(false).catch(() => undefined);
    await page.close();
    await server.close();
  }
  return {
    changes,
    episodes,
    queued: median(rows.map((r) => r.queued)),
    uploads: median(rows.map((r) => r.uploads)),
    actionsSent: median(rows.map((r) => r.actions)),
    totalRequests: median(rows.map((r) => r.real)),
    ms: round(median(rows.map((r) => r.ms))),
    msRuns: rows.map((r) => round(r.ms)),
    latencyMs,
    naiveUploads: changes,
  };
}

const playbackScript = fileURLToPath(new URL('./episodes-playback.ts', import.meta.url));
const repo = fileURLToPath(new URL('../../', import.meta.url));

/** The simulated hour, in a child process of its own (see episodes-playback.ts). */
async function playback(seconds: number): Promise<PlaybackFigures> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', playbackScript, String(seconds)], { cwd: repo, maxBuffer: 1024 * 1024 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as PlaybackFigures;
}

/** Run the episodes section in `browser` (the playback part in Node, simulated time). */
export async function episodesBench(browser: BenchBrowser, plan: EpisodesPlan, log: (line: string) => void): Promise<EpisodesFigures> {
  const first = await firstSync(browser, plan.firstSync, log);
  log(`  episodes playback: ${plan.playbackSeconds} s of setProgress every second, SIMULATED time (Node, virtual clock) ...`);
  const play = await playback(plan.playbackSeconds);
  log(`  episodes playback: ${play.uploads} uploads in ${play.seconds} simulated s (+${play.trailingUploads} after the pause), server holds position ${play.serverPosition} of ${play.lastPosition}`);
  if (play.serverPosition !== play.lastPosition) throw new Error(`bench: after the playback the server holds position ${play.serverPosition}, not ${play.lastPosition}`);
  const off = await offline(browser, plan.offline, log);
  return { dialect: 'mygpo', firstSync: first, playback: play, offline: off };
}
