// The chaos scenario against the gPodder reference server (both dialects, both path families), 20 seeds:
// local adds, toggles, moves and removes, another device's uploads, faults, crashes; then convergence,
// nothing lost per URL, nothing pending, credentials kept home. `npm run chaos -- --protocol gpodder` soaks it.
import { describe, expect, it } from 'vitest';
import { GpodderScenarioFailure, runGpodderScenario } from '../chaos/gpodder-scenario.ts';

/** A seed's trace, whether its invariants held or not (a failure's trace must replay too). */
async function traceOf(seed: number): Promise<string[]> {
  try {
    return (await runGpodderScenario(seed)).trace;
  } catch (error) {
    if (error instanceof GpodderScenarioFailure) return error.trace;
    throw error;
  }
}

describe('chaos over gPodder', () => {
  for (let seed = 1; seed <= 20; seed++) {
    it(`seed ${seed}: converged, nothing lost or doubled, credentials kept home`, async () => {
      const result = await runGpodderScenario(seed);
      // Something happened to check: subscription changes or listening state, here or on another device.
      expect(result.intents + result.foreign + result.episodeCalls + result.foreignActions).toBeGreaterThan(5);
      expect(result.requests).toBeGreaterThan(5);
    }, 60_000);
  }

  it('a seed replays exactly: the same trace alone and beside another scenario', async () => {
    const alone = await traceOf(7);
    const [beside] = await Promise.all([traceOf(7), traceOf(8)]);
    expect(alone.length).toBeGreaterThan(20);
    expect(alone.some((line) => line.includes('hostile:'))).toBe(true);
    expect(beside).toEqual(alone);
  }, 60_000);

  it('covers both dialects, both path families and both kinds of mygpo log across its seeds', async () => {
    const seen = new Set<string>();
    for (let seed = 1; seed <= 20; seed++) {
      const r = await runGpodderScenario(seed, 2, []);
      // mygpo's /api/2 in both server kinds: hiding what it stamped ahead of its clock, or listing it.
      seen.add(`${r.dialect}/${r.protocol}${r.dialect === 'mygpo' && r.protocol === 'gpodder' ? `/${r.ahead}` : ''}`);
    }
    expect([...seen].sort()).toEqual(['mygpo/gpodder/hidden', 'mygpo/gpodder/listed', 'mygpo/nextcloud', 'opodsync/gpodder', 'opodsync/nextcloud']);
  }, 60_000);
});
