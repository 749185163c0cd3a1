// The lost-answer family (issue 31): the server handled an add and its answer never came; another device
// changed that feed before the retry. Seeds known to reach it, run with only this family (`npm run chaos --
// --seed N --families lost-answer` replays one); the trace must show the answer lost and the other device's
// change after it, and the invariants hold: the other device's later word stands.
import { describe, expect, it } from 'vitest';
import { familyLines } from '../chaos/family-seeds.ts';

describe("chaos family: a lost answer, then another device's change", () => {
  it.each([
    ['opa', 2],
    ['opa', 17],
    ['gpodder', 39],
  ] as const)('%s seed %i: the server handled the add, its answer was lost, another device changed the feed', async (protocol, seed) => {
    const lines = await familyLines(protocol, seed, 'lost-answer');
    expect(lines.some((line) => /the server handled the (POST|upload).+answer was lost, and another device (removed|unsubscribed) it/.test(line))).toBe(true);
  }, 60_000);
});
