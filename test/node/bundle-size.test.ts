// The size budgets the bench prints (issue 27), from a fresh library build: one budget for the page entry,
// the store included, and one for the engine's own share of the worker (the bundle without Dexie and comlink,
// told apart from the total through the source map; the total is printed beside it, not budgeted).
import { beforeAll, describe, expect, it } from 'vitest';
import { measureSize, type SizeResult } from '../bench/support/size.ts';

describe('bundle sizes (gzip, a fresh library build)', () => {
  let size: SizeResult;
  beforeAll(async () => {
    size = await measureSize(true);
  }, 120_000);

  it('the page entry, client.store() included, is at most 5 KiB', () => {
    expect(size.storeGzipBytes).toBeGreaterThan(0);
    expect(size.pageGzipBytes).toBeGreaterThan(size.storeGzipBytes);
    expect(size.pageGzipBytes).toBeLessThanOrEqual(5 * 1024);
  });

  it("the worker's own share is the bundle without Dexie and comlink, at most 32 KiB", () => {
    const deps = size.workerDepsGzipBytes!;
    expect(size.workerOwnGzipBytes).toBeGreaterThan(0);
    // Dexie is most of what is left out; the parts, each gzipped alone, add up to about the whole.
    expect(deps.dexie).toBeGreaterThan(size.workerGzipBytes / 3);
    expect(size.workerOwnGzipBytes!).toBeLessThan(size.workerGzipBytes - deps.dexie);
    expect(size.workerOwnGzipBytes! + deps.dexie + deps.comlink).toBeGreaterThan(size.workerGzipBytes);
    expect(size.workerModules?.[0]?.source).toBe('dexie');
    expect(size.workerOwnGzipBytes!).toBeLessThanOrEqual(32 * 1024);
  });
});
