// A smoke check of the bench harness for a test to call (the benchmarks give figures, not pass/fail timing):
// runs the quick plan in one engine (tiny sizes, one run each; ~15 s) and checks that every figure the JSON
// promises for that engine is there and is a finite number. Correctness inside the runs (row counts, foreign changes pulled, replayed
// changes on the server) is checked by the bench itself, which throws.
import type { EngineName } from '../support/engines.ts';
import { QUICK_PLAN, runBench, type BenchResult } from './bench.ts';

/** The JSON keys `npm run bench` promises in every engine (dotted paths into the result). */
export const REQUIRED_KEYS = [
  ...(['n1k', 'n10k', 'n100k'] as const).flatMap((k) => [`initialPull.${k}.engineMs`, `initialPull.${k}.baselineMs`, `initialPull.${k}.ratio`]),
  'incrementalPull.noChange.requests',
  'incrementalPull.noChange.ms',
  'incrementalPull.tenChanges.requests',
  'incrementalPull.tenChanges.ms',
  'updateLatency.p50Ms',
  'updateLatency.p95Ms',
  'updateLatency.rawP50Ms',
  'updateLatency.p50Ratio',
  'updateLatency.p95Ratio',
  'updateLatency.editP50Ms',
  'updateLatency.editFloorP50Ratio',
  'coldOpen.engineMs',
  'coldOpen.rawMs',
  'coldOpen.ratio',
  'replay.changes',
  'replay.requests',
  'replay.ms',
  'gpodderReplay.requests',
  'gpodderReplay.ms',
  'import.importOpml.ms',
  'import.importOpml.baselineMs',
  'import.importOpml.ratio',
  'import.importOpml.leastRatio',
  'import.importOpml.snapshots',
  'import.addMany.ms',
  'import.addMany.baselineMs',
  'import.addMany.ratio',
  'import.addMany.snapshots',
  'import.reconnect.opa.requests',
  'import.reconnect.gpodder.requests',
  'deadServer.opa.requests',
  'deadServer.gpodder.requests',
  'episodes.firstSync.engineMs',
  'episodes.firstSync.baselineMs',
  'episodes.firstSync.ratio',
  'episodes.firstSync.episodeRequests',
  'episodes.playback.uploads',
  'episodes.playback.uploadsPerHour',
  'episodes.offline.uploads',
  'episodes.offline.actionsSent',
  'episodes.offline.ms',
  'size.pageGzipBytes',
  'size.workerGzipBytes',
  'size.workerOwnGzipBytes',
  'size.storeGzipBytes',
] as const;

function at(value: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), value);
}

/** Figures only Chromium gives: 'longtask' entries, the worker heap over CDP, a trace's busy times, and the store's (measured there only). */
export const CHROMIUM_KEYS = [
  'updateLatency.longestTaskMs',
  'memory.peakHeapMB',
  'store.small.otherTab.p95Ms',
  'store.large.otherTab.p95Ms',
  'store.firstSync.snapshots',
  'scale.playback.main.p95Ms',
  'scale.playback.worker.p95Ms',
  'scale.largeStore.total.p95Ms',
  'scale.largeStore.own.p95Ms',
] as const;

/** Keys of `result` that are missing or not finite numbers (empty when the shape is right). */
export function shapeProblems(result: BenchResult): string[] {
  const keys: readonly string[] = result.meta.browser === 'chromium' ? [...REQUIRED_KEYS, ...CHROMIUM_KEYS] : REQUIRED_KEYS;
  return keys.filter((key) => {
    const v = at(result, key);
    return typeof v !== 'number' || !Number.isFinite(v);
  }).map((key) => `${key} = ${JSON.stringify(at(result, key))}`);
}

/** Run `npm run bench -- --quick` in-process in `browser`; throws when a run fails or a figure is missing. */
export async function benchSmoke(browser: EngineName, log?: (line: string) => void): Promise<BenchResult> {
  const result = await runBench({ plan: QUICK_PLAN, browser, ...(log ? { log } : {}) });
  const problems = shapeProblems(result);
  if (problems.length) throw new Error(`bench smoke: missing or non-numeric figures: ${problems.join('; ')}`);
  return result;
}
