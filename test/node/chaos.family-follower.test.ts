// The follower family (issue 31): a follower tab's edit while the leader's request carrying the same
// subscription is in flight. Seeds known to reach it, run with only this family (`npm run chaos -- --seed N
// --families follower` replays one); the trace must show the edit made mid-request, and every invariant hold.
import { describe, expect, it } from 'vitest';
import { familyLines } from '../chaos/family-seeds.ts';

describe('chaos family: a follower tab edits during the leader request', () => {
  it.each([
    ['opa', 6],
    ['opa', 8],
    ['gpodder', 5],
    ['gpodder', 25],
  ] as const)('%s seed %i: the follower set the flag back while the request was in flight, and nothing was lost', async (protocol, seed) => {
    const lines = await familyLines(protocol, seed, 'follower');
    expect(lines.some((line) => /a follower tab set .+ back to (true|false) while the leader's .+ was in flight/.test(line))).toBe(true);
  }, 60_000);
});
