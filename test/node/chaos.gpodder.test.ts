// The chaos scenario against the gPodder reference server (both dialects, both path families), 20 seeds:
// local adds, toggles, moves and removes, another device's uploads, faults, crashes; then convergence,
// nothing lost per URL, nothing pending, credentials kept home. `npm run chaos -- --protocol gpodder` soaks it.
import { describe, expect, it } from 'vitest';
import { runGpodderScenario } from '../chaos/gpodder-scenario.ts';

describe('chaos over gPodder', () => {
  for (let seed = 1; seed <= 20; seed++) {
    it(`seed ${seed}: converged, nothing lost or doubled, credentials kept home`, async () => {
      const result = await runGpodderScenario(seed);
      expect(result.intents + result.foreign).toBeGreaterThan(5);
      expect(result.requests).toBeGreaterThan(5);
    }, 60_000);
  }

  it('a seed replays exactly: the same trace alone and beside another scenario', async () => {
    const alone = await runGpodderScenario(7);
    const [beside] = await Promise.all([runGpodderScenario(7), runGpodderScenario(8)]);
    expect(alone.trace.length).toBeGreaterThan(20);
    expect(beside!.trace).toEqual(alone.trace);
  }, 60_000);

  it('covers both dialects and both path families across its seeds', async () => {
    const seen = new Set<string>();
    for (let seed = 1; seed <= 20; seed++) {
      const r = await runGpodderScenario(seed, 2);
      seen.add(`${r.dialect}/${r.protocol}`);
    }
    expect([...seen].sort()).toEqual(['mygpo/gpodder', 'mygpo/nextcloud', 'opodsync/gpodder', 'opodsync/nextcloud']);
  }, 60_000);
});
