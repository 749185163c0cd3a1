// What the listening-state engine tests share: made-up feed and media URLs, wire times, and the gPodder
// reference server with an engine for it, both closed after each test of the file that imports this.
import { afterEach } from 'vitest';
import type { Protocol, SyncOptions } from '../../src/types.ts';
import { createSyncEngine, type SyncEngine } from '../../worker/index.ts';
import { startGpodderServer } from '../server/gpodder/server.ts';
import type { GpodderDialect, GpodderServer } from '../server/gpodder/types.ts';
import { wallTime } from '../server/listen.ts';
import { uniqueDb } from './helpers.ts';

/** A made-up feed URL. */
export const feed = (n: number | string) => `https://feeds.example/show-${n}.xml`;
/** A made-up enclosure URL. */
export const media = (n: number | string) => `https://media.example/ep-${n}.mp3`;
/** An action time as every server reads it: UTC `YYYY-MM-DDTHH:MM:SS`. */
export const naive = (ms: number) => new Date(ms).toISOString().slice(0, 19);
/** mygpo lists only actions stamped before its clock: other devices' actions are a day old. */
export const DAY_AGO = Date.now() - 24 * 3600_000;

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close().catch(() => undefined);
});

/** A gPodder reference server in `dialect`, on the wall clock. */
export async function gpodderServer(dialect: GpodderDialect): Promise<GpodderServer> {
  const s = await startGpodderServer({ port: 0, dialect, time: wallTime });
  open.push(s);
  return s;
}

/** An engine for alice on `s` (device `web-player`), no timers of its own, quick retries; `options` override. */
export function episodeEngine(s: GpodderServer, protocol: Exclude<Protocol, 'opa'>, name: string, options: Partial<SyncOptions> = {}): SyncEngine {
  const e = createSyncEngine({
    protocol,
    baseUrl: s.url,
    auth: { type: 'basic', username: 'alice', password: 'alice-password' },
    device: 'web-player',
    dbName: uniqueDb(`${name}-${protocol}`),
    pullInterval: 0,
    pushDelay: 0,
    timeout: 5000,
    retry: { baseDelay: 10, maxDelay: 100 },
    ...options,
  });
  open.push(e);
  return e;
}
