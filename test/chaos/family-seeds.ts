// What the family node tests share (test/node/chaos.family-*.test.ts): a seed run with one family switched on,
// whose trace must show the family ran (the line `ran` starts, see families.ts) and whose invariants must hold.
import { runGpodderScenario } from './gpodder-scenario.ts';
import { runScenario } from './scenario.ts';
import { ran, type Family } from './families.ts';

/** The trace lines saying `family` ran, in a seed of `protocol` run with only that family (throws on a failure). */
export async function familyLines(protocol: 'opa' | 'gpodder', seed: number, family: Family): Promise<string[]> {
  const trace = protocol === 'opa' ? (await runScenario({ seed, families: [family] })).trace : (await runGpodderScenario(seed, 40, undefined, [family])).trace;
  return trace.filter((line) => line.includes(ran(family)));
}
