// How a test file that needs the real opodsync says plainly that it did not run, and why.
import { describe, expect, it } from 'vitest';
import { opodsyncAvailability } from './opodsync.ts';

/** Whether this run must have opodsync (CI, or OPODSYNC_REQUIRED=1): its absence is then a failure. */
export const opodsyncRequired = (): boolean => Boolean(process.env.CI || process.env.OPODSYNC_REQUIRED);

/**
 * `describe(title, body)` when opodsync is available. Otherwise, on a developer's machine, the same tests
 * reported as skipped (never as passes) under a title that says why; where opodsync is required, one
 * failing test that says what is missing.
 */
export function describeOpodsync(title: string, body: () => void): void {
  const where = opodsyncAvailability();
  if (where.available) {
    describe(title, body);
    return;
  }
  if (opodsyncRequired()) {
    describe(title, () => {
      it(`did not run: ${where.reason}`, () => {
        expect.fail(`${title}: opodsync is required here (CI or OPODSYNC_REQUIRED) but ${where.reason}`);
      });
    });
    return;
  }
  // Printed too, so the default reporter (which lists skipped files by their counts only) says why.
  console.warn(`skipped: ${title}: ${where.reason}`);
  describe.skip(`${title} [skipped: ${where.reason}]`, body);
}
