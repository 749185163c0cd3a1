// How a test file that needs the real opodsync says plainly that it did not run, and why.
import { describe, expect, it } from 'vitest';
import { opodsyncAvailability } from './opodsync.ts';

/** Whether this run must have opodsync (CI, or OPODSYNC_REQUIRED=1): its absence is then a failure. */
export const opodsyncRequired = (): boolean => Boolean(process.env.CI || process.env.OPODSYNC_REQUIRED);

/**
 * `describe(title, body)` when opodsync is available. Otherwise one test, named for what did not run
 * and why, that passes on a developer's machine and fails where opodsync is required.
 */
export function describeOpodsync(title: string, body: () => void): void {
  const where = opodsyncAvailability();
  if (where.available) {
    describe(title, body);
    return;
  }
  describe(title, () => {
    it(`did not run: ${where.reason}`, () => {
      expect(opodsyncRequired(), `${title}: opodsync is required here (CI or OPODSYNC_REQUIRED) but ${where.reason}`).toBe(false);
    });
  });
}
