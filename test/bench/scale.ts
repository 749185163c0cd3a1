// A heavy listener's library (issue 27), Chromium only: what playing costs with a big feed's store mounted
// (a `setProgress` every second, the main thread's and the worker's busy time per second, from a trace), and
// what one change costs a store of many subscriptions (the `change` event → the snapshot that shows it).
import { playwrightPage } from '../support/drivers/chromium.ts';
import { startServer } from '../server/server.ts';
import { accountWithHistory, args as gpodderArgs, feedUrl, mediaUrl } from './episodes.ts';
import type { PullArgs } from './pages/api.ts';
import { call, type BenchBrowser } from './support/browser.ts';
import { traceBusy } from './support/busy.ts';
import { percentile, round } from './support/stats.ts';

/** What the scale section runs. */
export interface ScalePlan {
  /** Seconds of playback, a `setProgress` each, with the store of a feed of `episodes` episodes mounted. */
  seconds: number;
  episodes: number;
  /** A store of `subscriptions` rows, `edits` edits made at rest. */
  subscriptions: number;
  edits: number;
}

export const FULL_SCALE: ScalePlan = { seconds: 60, episodes: 3_000, subscriptions: 10_000, edits: 50 };
/** The smoke run's: a couple of seconds. */
export const QUICK_SCALE: ScalePlan = { seconds: 2, episodes: 100, subscriptions: 200, edits: 3 };

const spread = (xs: number[]) => ({ p50Ms: round(percentile(xs, 50), 2), p95Ms: round(percentile(xs, 95), 2), maxMs: round(Math.max(...xs), 2) });

/** The scale section's figures (`scale` in the JSON). */
export interface ScaleFigures {
  playback: {
    seconds: number;
    episodes: number;
    setProgressCalls: number;
    /** Snapshots the mounted store made during the playback. */
    snapshots: number;
    /** Busy ms per whole second of the traced window: the page's main thread, its dedicated worker(s). */
    main: { p50Ms: number; p95Ms: number; maxMs: number };
    worker: { p50Ms: number; p95Ms: number; maxMs: number };
    /** The same as the tasks' wall time (it also counts time the OS gave the core to another process). */
    mainWall: { p50Ms: number; p95Ms: number; maxMs: number };
    workerWall: { p50Ms: number; p95Ms: number; maxMs: number };
    method: string;
  };
  largeStore: {
    rows: number;
    edits: number;
    /** The `change` event reaching the page → the store's snapshot showing the edit. */
    total: { p50Ms: number; p95Ms: number; maxMs: number };
    /** Of that, the event → the last of the store's reads answering (three round trips to the worker). */
    reads: { p50Ms: number; p95Ms: number; maxMs: number };
    /** The rest: the store's own work (merging the rows read into its list, the snapshot). */
    own: { p50Ms: number; p95Ms: number; maxMs: number };
  };
}

async function playback(browser: BenchBrowser, plan: ScalePlan, log: (l: string) => void): Promise<ScaleFigures['playback']> {
  const server = await accountWithHistory(plan.episodes, 1);
  const page = await browser.openPage();
  const a = gpodderArgs(server, 'scale');
  try {
    await call(page, 'open', a);
    await call(page, 'sync');
    await call(page, 'mountEpisodeStore', feedUrl(0), plan.episodes);
    const trace = await traceBusy(playwrightPage(page)!);
    const played = await call(page, 'play', { podcast: feedUrl(0), episode: mediaUrl(0, 0) }, plan.seconds);
    const busy = await trace.stop();
    if (busy.workers < 1) throw new Error('bench: no dedicated worker in the trace');
    const figures = {
      seconds: busy.main.length,
      episodes: plan.episodes,
      setProgressCalls: played.calls,
      snapshots: played.snapshots,
      main: spread(busy.main),
      worker: spread(busy.worker),
      mainWall: spread(busy.mainWall),
      workerWall: spread(busy.workerWall),
      method: `Chrome trace (CDP Tracing, category toplevel): per whole second, the ${busy.cpuTime ? 'CPU time (tdur)' : 'wall time'} of the thread's tasks (RunTask) in it; the page's main thread and its dedicated worker thread`,
    };
    log(`  playback: ${figures.setProgressCalls} setProgress over ${figures.seconds} s, ${figures.snapshots} snapshots; CPU busy per second main p50 ${figures.main.p50Ms} / p95 ${figures.main.p95Ms} / max ${figures.main.maxMs} ms (wall p95 ${figures.mainWall.p95Ms}), worker p50 ${figures.worker.p50Ms} / p95 ${figures.worker.p95Ms} / max ${figures.worker.maxMs} ms (wall p95 ${figures.workerWall.p95Ms})`);
    await call(page, 'close');
    await call(page, 'deleteDb', a.dbName, 30_000);
    return figures;
  } finally {
    await page.close();
    await server.close();
  }
}

async function largeStore(browser: BenchBrowser, plan: ScalePlan, args: (server: { url: string }) => PullArgs, log: (l: string) => void): Promise<ScaleFigures['largeStore']> {
  const server = await startServer({ port: 0, seed: plan.subscriptions });
  const page = await browser.openPage();
  const a = args(server);
  try {
    await call(page, 'open', a, { pushDelay: 20 });
    await call(page, 'sync');
    const guids = server.state().slice(0, plan.edits).map((e) => e.guid);
    const { totalMs, readMs } = await call(page, 'storeChanges', plan.subscriptions, guids);
    const figures = { rows: plan.subscriptions, edits: guids.length, total: spread(totalMs), reads: spread(readMs), own: spread(totalMs.map((t, i) => t - readMs[i]!)) };
    log(`  store of ${figures.rows}: change event → snapshot p50 ${figures.total.p50Ms} / p95 ${figures.total.p95Ms} ms (reads p95 ${figures.reads.p95Ms} ms, the store's own p50 ${figures.own.p50Ms} / p95 ${figures.own.p95Ms} ms)`);
    await call(page, 'close');
    await call(page, 'deleteDb', a.dbName, 30_000);
    return figures;
  } finally {
    await page.close();
    await server.close();
  }
}

/** Run the scale section in Chromium. */
export async function scaleBench(browser: BenchBrowser, plan: ScalePlan, args: (server: { url: string }) => PullArgs, log: (l: string) => void): Promise<ScaleFigures> {
  return { largeStore: await largeStore(browser, plan, args, log), playback: await playback(browser, plan, log) };
}
