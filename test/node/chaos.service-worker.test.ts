// The service worker's sync event in the soak (issue 31 item 5): after the page goes away (the last-copy and
// lost-answer families), the browser may wake the app's service worker first. Its engine starts with a push
// (pulling first only when a change waits for the server's word or a hold runs) and is stopped after a drawn
// time; then the next page opens. Seeds known to reach it with changes waiting, which the event sends, run with
// the last-copy family only (`npm run chaos -- --seed N --families last-copy` replays one); each seed's
// invariants hold (nothing lost, nothing doubled) or the run throws.
import { describe, expect, it } from 'vitest';
import { runGpodderScenario } from '../chaos/gpodder-scenario.ts';
import { runScenario } from '../chaos/scenario.ts';

describe("chaos: the service worker's sync event after the page goes away", () => {
  it.each([
    ['opa', 3],
    ['opa', 4],
    ['gpodder', 16],
    ['gpodder', 17],
  ] as const)('%s seed %i: the event sent what waited, and nothing was lost', async (protocol, seed) => {
    const { trace } = protocol === 'opa' ? await runScenario({ seed, families: ['last-copy'] }) : await runGpodderScenario(seed, 40, undefined, ['last-copy']);
    const stops = trace.filter((line) => line.includes("the service worker's engine stops:"));
    expect(stops.some((line) => /: [1-9]\d* changes waited, 0 still wait/.test(line))).toBe(true);
  }, 60_000);
});
