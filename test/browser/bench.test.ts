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
    // Issue 33's import and issue 31's dead server were measured (their values are the bench's to judge).
    expect(result.import?.importOpml.snapshots).toBeGreaterThanOrEqual(1);
    expect(result.import?.addMany.snapshots).toBeGreaterThanOrEqual(1);
    expect(result.import?.reconnect.opa.requests).toBeGreaterThanOrEqual(1);
    expect(result.import?.reconnect.gpodder.requests).toBeGreaterThanOrEqual(1);
    expect(result.deadServer?.opa).toMatchObject({ runs: 1, pending: result.deadServer?.adds });
    expect(result.deadServer?.gpodder).toMatchObject({ runs: 1, pending: result.deadServer?.adds });
    expect(result.deadServer?.opa.trace).toHaveLength(1);
  }, 180_000);
});
