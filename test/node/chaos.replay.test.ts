// A seed replays exactly: the scenario runs in simulated time (test/chaos/sim.ts), so the wall clock and
// the machine's load decide nothing. The same seed, run alone and then beside another scenario competing for
// the event loop, yields the same trace line for line, hostile faults included (device clock steps, proxies,
// another tab), whether the seed passes or finds a violation (the trace of a failure must replay too).
import { describe, expect, it } from 'vitest';
import { runScenario, ScenarioFailure } from '../chaos/scenario.ts';

/** A seed's trace, whether its invariants held or not. */
async function traceOf(seed: number): Promise<string[]> {
  try {
    return (await runScenario({ seed })).trace;
  } catch (error) {
    if (error instanceof ScenarioFailure) return error.trace;
    throw error;
  }
}

describe('chaos: a seed replays exactly', () => {
  it('the same seed gives the same trace, alone or beside another scenario', async () => {
    const alone = await traceOf(307);
    const [beside] = await Promise.all([traceOf(307), traceOf(308)]);
    expect(alone.length).toBeGreaterThan(30);
    // The pattern every seed covers ran, and hostile faults were in the script.
    expect(alone.some((line) => line.includes('pattern:'))).toBe(true);
    expect(alone.some((line) => line.includes('hostile:'))).toBe(true);
    expect(beside).toEqual(alone);
  }, 60_000);
});
