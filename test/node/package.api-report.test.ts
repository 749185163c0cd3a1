// Each entry's public surface is checked in as an API Extractor report (etc/*.api.md): a change to the exported
// types fails here until `npm run api` rewrites the report, so the change shows as a diff in review.
import { describe, expect, it } from 'vitest';
import { apiReports, ENTRIES } from './docs/api-report.ts';

describe('package: API reports', () => {
  it('etc/opa-sync.api.md, etc/opa-sync-worker.api.md and etc/opa-sync-sw.api.md match the public surface (else: npm run api)', async () => {
    const results = await apiReports(false);
    expect(results.map((r) => r.report)).toEqual(ENTRIES.map((e) => e.report));
    expect(results.filter((r) => r.changed).map((r) => `${r.report}: ${r.messages.join('; ')}`)).toEqual([]);
    expect(results.every((r) => r.succeeded)).toBe(true);
  }, 120_000);
});
