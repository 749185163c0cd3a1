// A seed replays exactly: the scenario runs in simulated time (test/chaos/sim.ts), so the wall clock and
// the machine's load decide nothing. The same seed, run alone and then beside another scenario competing for
// the event loop, yields the same trace line for line.
import { describe, expect, it } from 'vitest';
import { runScenario } from '../chaos/scenario.ts';

describe('chaos: a seed replays exactly', () => {
  it('the same seed gives the same trace, alone or beside another scenario', async () => {
    const alone = await runScenario({ seed: 307 });
    const [beside] = await Promise.all([runScenario({ seed: 307 }), runScenario({ seed: 308 })]);
    expect(alone.trace.length).toBeGreaterThan(30);
    // The pattern every seed covers ran, and the trace ends on the server's final state.
    expect(alone.trace.some((line) => line.includes('pattern:'))).toBe(true);
    expect(alone.trace.at(-1)).toMatch(/ end: \d+ requests, server state /);
    expect(beside!.trace).toEqual(alone.trace);
  }, 60_000);
});
