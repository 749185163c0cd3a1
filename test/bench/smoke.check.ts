// A smoke check of the bench harness for a test to call (the benchmarks give figures, not pass/fail timing):
// runs the quick plan (tiny sizes, one run each; ~15 s) and checks that every figure the JSON promises is
// there and is a finite number. Correctness inside the runs (row counts, foreign changes pulled, replayed
// changes on the server) is checked by the bench itself, which throws.
import { QUICK_PLAN, runBench, type BenchResult } from './bench.ts';

/** The JSON keys `npm run bench` promises (dotted paths into the result). */
export const REQUIRED_KEYS = [
  ...(['n1k', 'n10k', 'n100k'] as const).flatMap((k) => [`initialPull.${k}.engineMs`, `initialPull.${k}.baselineMs`, `initialPull.${k}.ratio`]),
  'incrementalPull.noChange.requests',
  'incrementalPull.noChange.ms',
  'incrementalPull.tenChanges.requests',
  'incrementalPull.tenChanges.ms',
  'updateLatency.p50Ms',
  'updateLatency.p95Ms',
  'updateLatency.longestTaskMs',
  'replay.changes',
  'replay.requests',
  'replay.ms',
  'memory.peakHeapMB',
  'size.pageGzipBytes',
  'size.workerGzipBytes',
] as const;

function at(value: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), value);
}

/** Keys of `result` that are missing or not finite numbers (empty when the shape is right). */
export function shapeProblems(result: BenchResult): string[] {
  return REQUIRED_KEYS.filter((key) => {
    const v = at(result, key);
    return typeof v !== 'number' || !Number.isFinite(v);
  }).map((key) => `${key} = ${JSON.stringify(at(result, key))}`);
}

/** Run `npm run bench -- --quick` in-process; throws when a run fails or a figure is missing. */
export async function benchSmoke(log?: (line: string) => void): Promise<BenchResult> {
  const result = await runBench({ plan: QUICK_PLAN, ...(log ? { log } : {}) });
  const problems = shapeProblems(result);
  if (problems.length) throw new Error(`bench smoke: missing or non-numeric figures: ${problems.join('; ')}`);
  return result;
}
