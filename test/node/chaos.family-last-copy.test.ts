// The last-copy family (issue 31): the page's last-chance copy is sent as the page goes away (maybe with the
// worker's own request in flight), then the next start. Seeds known to reach it, run with only this family
// (`npm run chaos -- --seed N --families last-copy` replays one); the trace must show a copy with requests sent.
import { describe, expect, it } from 'vitest';
import { familyLines } from '../chaos/family-seeds.ts';

describe('chaos family: the last copy sent at close, then the next start', () => {
  it.each([
    ['opa', 1],
    ['opa', 2],
    ['gpodder', 9],
  ] as const)('%s seed %i: the page sent a copy that held requests, and nothing was lost', async (protocol, seed) => {
    const lines = await familyLines(protocol, seed, 'last-copy');
    expect(lines.some((line) => /the page goes away.* and sends its copy.*: (POST|PATCH|DELETE) /.test(line))).toBe(true);
  }, 60_000);
});
