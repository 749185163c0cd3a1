// The benchmark harness still runs end to end in every engine (figures are for `npm run bench`, never asserted
// as timings here).
import { expect, test } from 'vitest';
import { benchSmoke } from '../bench/smoke.check.ts';
import { forEachEngine } from './support/harness.ts';

forEachEngine((engine) => {
  test('npm run bench -- --quick measures every figure', async () => {
    const result = await benchSmoke(engine); // the quick plan; throws on a failed run or a missing figure
    expect(result.meta).toMatchObject({ mode: 'quick', browser: engine });
    expect(result.replay?.queued).toBe(result.replay?.subscriptions);
    expect(result.incrementalPull?.noChange.requests).toBe(1);
  }, 180_000);
});
