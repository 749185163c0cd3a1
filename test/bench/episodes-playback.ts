// An hour of playback with `setProgress` every second, in SIMULATED time (test/chaos/sim.ts): an hour of real
// time is not a bench run. The engine runs in Node on fake-indexeddb against the gPodder reference server
// (mygpo dialect), both on one virtual clock, with the engine's default options (progressInterval 30 s,
// pushDelay 50 ms, a pull every 5 minutes); the figure is the episode uploads the server saw. Run in a child
// process by episodes.ts (`node --import tsx test/bench/episodes-playback.ts SECONDS` prints the JSON), so the
// simulation's quiet detector and fake-indexeddb never share a process with the browser driver.
import 'fake-indexeddb/auto';
import { createSyncEngine } from '../../worker/index.ts';
import { prng } from '../chaos/prng.ts';
import { createSimulation } from '../chaos/sim.ts';
import { startGpodderServer } from '../server/gpodder/server.ts';

/** What the server saw during the simulated playback. */
export interface PlaybackFigures {
  /** Simulated seconds of playback (one `setProgress` per second). */
  seconds: number;
  setProgressCalls: number;
  /** The engine's `progressInterval` (its default). */
  progressIntervalMs: number;
  /** Episode uploads (POST /api/2/episodes) during the playback. */
  uploads: number;
  /** `uploads` scaled to an hour (the same number when `seconds` is 3600). */
  uploadsPerHour: number;
  /** Uploads in the `progressInterval` after the last `setProgress` (the player paused): the final position going up. */
  trailingUploads: number;
  /** Actions in all those uploads. */
  actionsSent: number;
  /** Every other request in the same time (pulls every 5 minutes, the first sync's). */
  otherRequests: number;
  /** The position the server holds at the end (must be the last one set). */
  serverPosition: number | null;
  lastPosition: number;
  /** What a naive client (one upload per `setProgress`) would send. */
  naiveUploads: number;
  clock: 'simulated';
}

const FEED = 'https://feeds.example/bench-playback.xml';
const REF = { podcast: FEED, episode: 'https://media.example/bench-playback/ep-1.mp3', guid: 'bench-playback-1' };
const DEVICE = 'bench-player';

/** Play one episode for `seconds` simulated seconds, a `setProgress` each second, and count the uploads. */
export async function simulatedPlayback(seconds: number): Promise<PlaybackFigures> {
  const rng = prng(0x0b5e55);
  const sim = createSimulation(() => rng.next());
  const server = await startGpodderServer({ port: 0, dialect: 'mygpo', time: sim.serverTime });
  // The engine reads this device's list under mygpo: the episode's feed is subscribed there.
  server.registerDevice(DEVICE);
  server.foreign.add([FEED], { device: DEVICE });
  const engine = createSyncEngine({
    protocol: 'gpodder',
    baseUrl: server.url,
    auth: { type: 'basic', username: 'alice', password: 'alice-password' },
    device: DEVICE,
    dbName: `opa-bench-playback-${process.pid}`,
    fetch: ((input: RequestInfo | URL, init?: RequestInit) => sim.exclusive(() => fetch(input, init))) as typeof fetch,
    clock: sim.clock,
  });
  const progressIntervalMs = 30_000;
  try {
    await engine.sync();
    const total = Math.max(seconds, 1);
    server.clearLog();
    for (let s = 0; s < seconds; s++) {
      await engine.setProgress(REF, { position: s, total });
      await sim.sleep(1000);
    }
    const during = server.log().filter((e) => e.method !== 'OPTIONS');
    server.clearLog();
    // The player pauses: the last position still goes up within one interval.
    await sim.sleep(progressIntervalMs + 1000);
    const after = server.log().filter((e) => e.method !== 'OPTIONS');
    const isUpload = (e: { method: string; path: string }) => e.method === 'POST' && e.path.startsWith('/api/2/episodes/');
    const uploads = during.filter(isUpload);
    const trailing = after.filter(isUpload);
    const actionsSent = [...uploads, ...trailing].reduce((n, e) => n + (Array.isArray(e.body) ? e.body.length : 0), 0);
    const mine = server.episodeLog().filter((a) => a.device === DEVICE && a.episode === REF.episode);
    return {
      seconds,
      setProgressCalls: seconds,
      progressIntervalMs,
      uploads: uploads.length,
      uploadsPerHour: Math.round((uploads.length * 3600) / seconds),
      trailingUploads: trailing.length,
      actionsSent,
      otherRequests: during.length - uploads.length + after.length - trailing.length,
      serverPosition: mine.at(-1)?.position ?? null,
      lastPosition: seconds - 1,
      naiveUploads: seconds,
      clock: 'simulated',
    };
  } finally {
    await engine.close();
    sim.stop();
    await server.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const seconds = Number(process.argv[2] ?? 3600);
  if (!Number.isInteger(seconds) || seconds < 1) throw new Error('usage: episodes-playback.ts SECONDS');
  process.stdout.write(JSON.stringify(await simulatedPlayback(seconds)) + '\n');
  // Sockets the sim left to the wall clock must not keep the child alive.
  process.exit(0);
}
