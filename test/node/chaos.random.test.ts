// The randomised chaos scenario, 20 seeds: faults, foreign changes, crashes and syncs interleaved, then the
// invariant checker. A failure prints its seed; `npm run chaos -- --seed N` replays it with its trace.
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { defaultsForSeed, KNOWN_ENGINE_BUGS, OPEN_ENGINE_BUGS, runScenario } from '../chaos/scenario.ts';

const SEEDS = Array.from({ length: 20 }, (_, i) => i + 1);

describe.concurrent('chaos: random faults, foreign changes and crashes', () => {
  for (const seed of SEEDS) {
    const label = defaultsForSeed(seed).refusals ? ' with refusals' : '';
    it(`seed ${seed}${label}: nothing lost or doubled, converged, cursor safe, credentials kept home`, async () => {
      const result = await runScenario({ seed, watchdog: 50_000 });
      // The scenario did real work (a generator that does nothing proves nothing).
      expect(result.intents + result.foreign).toBeGreaterThan(5);
      expect(result.faults).toBeGreaterThan(0);
    }, 60_000);
  }

  it('steers clear only of the open engine bugs (none today), each with a node test of its own that fails until it is fixed', () => {
    // Every once-known bug is covered by the seeds, except those still open (the soak's summary names them).
    // The three the soak families found (issue 31) each keep their node test, passing since their fix.
    for (const bug of ['copy-then-fold-back', 'bulk-portal-spin', 'copy-resends-unsettled-add'] as const) {
      const test = /test\/node\/(engine\.soak-found-[a-z-]+\.test\.ts)/.exec(KNOWN_ENGINE_BUGS[bug])?.[1];
      expect(test && existsSync(new URL(`./${test}`, import.meta.url)), bug).toBe(true);
    }
    expect(defaultsForSeed(1).avoid).toEqual(OPEN_ENGINE_BUGS);
    expect(Object.keys(KNOWN_ENGINE_BUGS).length).toBeGreaterThan(OPEN_ENGINE_BUGS.length);
    for (const bug of OPEN_ENGINE_BUGS) {
      const test = /test\/node\/(engine\.soak-found-[a-z-]+\.test\.ts)/.exec(KNOWN_ENGINE_BUGS[bug])?.[1];
      expect(test, bug).toBeDefined();
      expect(existsSync(new URL(`./${test}`, import.meta.url)), test).toBe(true);
    }
  });
});
