// The bulk family (issue 33): addMany of many feeds, or an OPML import, offline or online, under the soak's
// faults (413s on large uploads included). Seeds known to reach it, run with only this family (`npm run chaos
// -- --seed N --families bulk` replays one); the trace must show the adds, and nothing may be lost or doubled.
import { describe, expect, it } from 'vitest';
import { familyLines } from '../chaos/family-seeds.ts';

describe('chaos family: adds in bulk', () => {
  it.each([
    ['opa', 4],
    ['opa', 5],
    ['gpodder', 6],
  ] as const)('%s seed %i: many feeds added at once, each once on the server', async (protocol, seed) => {
    const lines = await familyLines(protocol, seed, 'bulk');
    expect(lines.some((line) => /(addMany|importOpml) of \d+ entries.*: [1-9]\d* added/.test(line))).toBe(true);
  }, 60_000);
});
