// Without opodsync, a file that needs it says so: its tests are reported skipped, with the reason in their
// names (never counted as passes), and where opodsync is required (CI, OPODSYNC_REQUIRED) the file fails.
// A fixture file is run in a child vitest with OPODSYNC_DIR pointing at a folder that does not exist.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const fixture = 'test/support/fixtures/opodsync-absent';

interface JsonReport {
  numPassedTests: number;
  numPendingTests: number;
  numFailedTests: number;
  testResults: { assertionResults: { status: string; fullName: string }[] }[];
}

/** Run the fixture in a child vitest with opodsync absent; `required` sets OPODSYNC_REQUIRED. */
function runFixture(required: boolean): Promise<JsonReport> {
  const env: NodeJS.ProcessEnv = { ...process.env, OPODSYNC_DIR: `${repo}test/support/fixtures/no-such-peers` };
  delete env.CI;
  delete env.OPODSYNC_REQUIRED;
  delete env.VITEST;
  if (required) env.OPODSYNC_REQUIRED = '1';
  return new Promise((ok, fail) => {
    execFile(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', '--root', fixture, '--reporter=json'], { cwd: repo, env }, (error, stdout) => {
      // A failing run exits non-zero: the JSON on stdout is the verdict either way.
      try {
        ok(JSON.parse(stdout) as JsonReport);
      } catch {
        fail(error ?? new Error(`no JSON report: ${stdout}`));
      }
    });
  });
}

describe('tests that need the real opodsync, when it is absent', () => {
  it('are reported skipped, with the missing folder in their names, and none passed', async () => {
    const report = await runFixture(false);
    expect(report.numPassedTests).toBe(0);
    expect(report.numFailedTests).toBe(0);
    expect(report.numPendingTests).toBe(2);
    const results = report.testResults.flatMap((r) => r.assertionResults);
    expect(results.map((r) => r.status)).toEqual(['skipped', 'skipped']);
    for (const r of results) expect(r.fullName).toContain('no-such-peers');
  });

  it('fail where opodsync is required', async () => {
    const report = await runFixture(true);
    expect(report.numPassedTests).toBe(0);
    expect(report.numFailedTests).toBe(1);
  });
});
