// When an episode's change goes (issue 25): a change's due time is its own (a played mark made while an upload
// of the same episode is in flight goes at the next push; progress keeps its interval), and an upload that goes
// anyway carries every pending change, whatever backoff or interval it waits out (never a server's Retry-After).
import { describe, expect, it } from 'vitest';
import type { SyncEngine } from '../../worker/index.ts';
import type { GpodderServer } from '../server/gpodder/types.ts';
import { episodeEngine, feed, gpodderServer, media } from './episode-helpers.ts';
import { until } from './helpers.ts';

const ep = (n: number) => ({ podcast: feed(0), episode: media(n), guid: `g${n}` });
const uploads = (s: GpodderServer) => s.log().filter((r) => r.method === 'POST' && /episode/.test(r.path));
const mine = (s: GpodderServer) => s.episodeLog().filter((a) => a.device === 'web-player');

/** The server with feed 0 subscribed on this device, and a fetch whose next episode upload can be held on its way. */
async function setup(options: Parameters<typeof episodeEngine>[3] = {}) {
  const s = await gpodderServer('mygpo');
  s.registerDevice('web-player');
  s.foreign.add([feed(0)], { device: 'web-player' });
  const gate = { hold: false, held: false, release: () => undefined as void };
  const e: SyncEngine = episodeEngine(s, 'gpodder', 'episode-due', {
    progressInterval: 60_000,
    ...options,
    fetch: async (input, init) => {
      if (gate.hold && init?.method === 'POST' && /episode/.test(String(input))) {
        gate.hold = false;
        const answer = await fetch(input, init);
        gate.held = true;
        await new Promise<void>((resolve) => (gate.release = resolve));
        return answer;
      }
      return fetch(input, init);
    },
  });
  await e.sync();
  return { s, e, gate };
}

// Nothing running: idle, or unreachable after a 503 (a 502/503/504 counts as the server unreachable).
const idle = async (e: SyncEngine) => ['idle', 'unreachable'].includes((await e.status()).phase);

describe("a change's due time is its own", () => {
  it('a played mark made while an upload of the same episode is in flight goes at the next push, not a progress interval later', async () => {
    const { s, e, gate } = await setup();
    gate.hold = true;
    await e.setProgress(ep(1), { position: 10, total: 100 });
    await until(() => gate.held, 5000, 'the progress upload to be on its way');
    await e.markPlayed(ep(1));
    gate.release();
    // No sync(): the engine's own push timer.
    await until(async () => !(await e.episode(ep(1)))?.pending, 5000, 'the played mark to be uploaded');
    expect(uploads(s)).toHaveLength(2);
    expect(mine(s).at(-1)).toMatchObject({ position: 100 });
  });

  it('progress made while an upload of the same episode is in flight keeps its interval', async () => {
    const { s, e, gate } = await setup();
    gate.hold = true;
    await e.setProgress(ep(1), { position: 10, total: 100 });
    await until(() => gate.held, 5000, 'the progress upload to be on its way');
    await e.setProgress(ep(1), { position: 20, total: 100 });
    gate.release();
    await until(async () => uploads(s).length === 1 && (await idle(e)), 5000, 'the first upload to settle');
    expect(await e.episode(ep(1))).toMatchObject({ position: 20, pending: true });
    expect(uploads(s)).toHaveLength(1);
  });
});

describe('an episode upload that goes carries every pending change', () => {
  it('progress waiting out its interval rides with another episode\'s change', async () => {
    const { s, e } = await setup();
    await e.setProgress(ep(1), { position: 10, total: 100 });
    await until(async () => !(await e.episode(ep(1)))?.pending && (await idle(e)), 5000, 'the first progress to go');
    // Uploaded once: its next progress waits the interval (a minute).
    await e.setProgress(ep(1), { position: 20, total: 100 });
    const before = uploads(s).length;
    await e.setProgress(ep(2), { position: 5, total: 100 });
    await until(async () => !(await e.episode(ep(2)))?.pending && (await idle(e)), 5000, 'the new episode to go');
    expect(uploads(s).length - before).toBe(1);
    expect(await e.episode(ep(1))).toMatchObject({ position: 20, pending: false });
  });

  it('a change waiting out a backoff rides with another episode\'s change; one under a Retry-After waits', async () => {
    const { s, e } = await setup({ retry: { baseDelay: 60_000, maxDelay: 60_000 } });
    // Episode 3: the server asked for an hour.
    s.failNext(1, 503, { method: 'POST', path: /episode/ }, { retryAfter: 3600 });
    await e.setProgress(ep(3), { position: 7, total: 100 });
    await until(async () => (await e.status()).lastError?.code === 'server' && (await idle(e)), 5000, 'the upload of episode 3 to fail');
    // Episode 2: its upload failed, it waits out a backoff of 30 s or more.
    s.failNext(1, 503, { method: 'POST', path: /episode/ });
    await e.setProgress(ep(2), { position: 5, total: 100 });
    await until(async () => uploads(s).length === 2 && (await idle(e)), 5000, 'the upload of episode 2 to fail');
    const before = uploads(s).length;
    await e.setProgress(ep(4), { position: 50, total: 100 });
    await until(async () => !(await e.episode(ep(4)))?.pending && (await idle(e)), 5000, 'the new episode to go');
    expect(uploads(s).length - before).toBe(1);
    expect(await e.episode(ep(2))).toMatchObject({ position: 5, pending: false });
    expect(await e.episode(ep(3))).toMatchObject({ position: 7, pending: true });
  });
});
