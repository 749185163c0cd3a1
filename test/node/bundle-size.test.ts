// The size figures the bench prints, from a fresh library build: the store's addition to the page entry
// within issue 19's 1 KiB (1.25 KiB since issue 25), and the worker's own share (without Dexie and comlink) told apart from the total.
// The worker's own 52 KiB budget (issue 18) is the bench's to report (`npm run bench -- --only=size`).
import { beforeAll, describe, expect, it } from 'vitest';
import { measureSize, type SizeResult } from '../bench/support/size.ts';

describe('bundle sizes (gzip, a fresh library build)', () => {
  let size: SizeResult;
  beforeAll(async () => {
    size = await measureSize(true);
  }, 120_000);

  // Issue 19's 1 KiB, plus issue 25's read retry with its error, the starting status and monotonic pacing (1,135 B then).
  it('client.store() adds at most 1.25 KiB to the page entry', () => {
    expect(size.storeGzipBytes).toBeGreaterThan(0);
    expect(size.storeGzipBytes).toBeLessThanOrEqual(1280);
  });

  it("the worker's own share is the bundle without Dexie and comlink", () => {
    const deps = size.workerDepsGzipBytes!;
    expect(size.workerOwnGzipBytes).toBeGreaterThan(0);
    // Dexie is most of what is left out; the parts, each gzipped alone, add up to about the whole.
    expect(deps.dexie).toBeGreaterThan(size.workerGzipBytes / 3);
    expect(size.workerOwnGzipBytes!).toBeLessThan(size.workerGzipBytes - deps.dexie);
    expect(size.workerOwnGzipBytes! + deps.dexie + deps.comlink).toBeGreaterThan(size.workerGzipBytes);
    expect(size.workerModules?.[0]?.source).toBe('dexie');
  });
});
