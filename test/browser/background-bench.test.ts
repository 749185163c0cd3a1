// The background bench (`npm run bench -- --background`) still runs end to end: a quick variant, one change
// made offline, one while the server is down 3 s and one whose page closed mid-push, each delivered by the service worker once (figures are
// the bench's, never asserted as timings here). Chromium: the only engine with Background Sync.
import { describe, expect, it } from 'vitest';
import { measureBackground } from '../bench/background.ts';
import { selectedEngines } from '../support/browsers.ts';

describe.runIf(selectedEngines().includes('chromium'))('chromium', () => {
  it('npm run bench -- --background --quick delivers each change once, with every page closed', async () => {
    const figures = await measureBackground({ runs: 1, down: 3, long: false });
    expect(figures.offline).toMatchObject({ runs: 1, delivered: 1 });
    expect(figures.offline.p50).toBeGreaterThanOrEqual(0);
    expect(figures.down.copies).toBe(1);
    expect(figures.down.latencyMs).toBeDefined();
    // The page closed mid-push (issue 34): a tag before the close, the change delivered once.
    expect(figures.midPush).toMatchObject({ tagged: true, copies: 1 });
    expect(figures.midPush.latencyMs).toBeDefined();
  }, 120_000);
});
