// Fixtures for the chaos suite that work both under vitest and in the soak runner (plain tsx), so nothing
// here imports vitest: a cleanup scope, engines on unique stores, a second origin that must never be called,
// and raw reads of an engine's database.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { openSyncDatabase, type StoredAlias, type StoredChange, type StoredSubscription } from '../../src/schema.ts';
import type { SyncOptions } from '../../src/types.ts';
import { createSyncEngine, type SyncEngine } from '../../worker/index.ts';
import { startServer } from '../server/server.ts';
import type { RefServer, ServerOptions } from '../server/types.ts';

export const TOKEN = 'demo-token';

/** Resources to release when a scenario ends, newest first. */
export class Scope {
  private readonly cleanups: (() => Promise<unknown> | unknown)[] = [];
  defer(fn: () => Promise<unknown> | unknown): void {
    this.cleanups.push(fn);
  }
  async close(): Promise<void> {
    while (this.cleanups.length) {
      try {
        await this.cleanups.pop()!();
      } catch {
        // Cleanup trouble must not hide the scenario's own result.
      }
    }
  }
}

let counter = 0;
/** A database name no other test or scenario uses (tests run in parallel processes). */
export function chaosDbName(prefix = 'chaos'): string {
  return `${prefix}-${process.pid}-${Date.now()}-${counter++}`;
}

/** A reference server released with the scope. */
export async function chaosServer(scope: Scope, options: ServerOptions = {}): Promise<RefServer> {
  // Seeded: a chaos seed replays exactly, server-made guids included.
  const s = await startServer({ port: 0, randomSeed: 0x5eed, ...options });
  scope.defer(() => s.close());
  return s;
}

/** Engine options the chaos suite uses: short timeout, quick retries, pulls only on demand. */
export function chaosOptions(s: { url: string }, options: Partial<SyncOptions> = {}): SyncOptions {
  return {
    baseUrl: s.url,
    auth: { type: 'bearer', token: TOKEN },
    pullInterval: 0,
    pushDelay: 0,
    timeout: 250,
    retry: { baseDelay: 10, maxDelay: 150 },
    dbName: chaosDbName(),
    ...options,
  };
}

/** An engine closed with the scope. */
export function chaosEngine(scope: Scope, s: { url: string }, options: Partial<SyncOptions> = {}): SyncEngine & { dbName: string } {
  const resolved = chaosOptions(s, options);
  const e = createSyncEngine(resolved);
  scope.defer(() => e.close());
  return Object.assign(e, { dbName: resolved.dbName! });
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** How a helper waits and reads the time: the wall clock, or a simulation's. */
export interface Time {
  now(): number;
  sleep(ms: number): Promise<void>;
}

/** The wall clock. */
export const realTime: Time = { now: () => Date.now(), sleep };

/**
 * Sync until nothing is queued (retries, Retry-After and deletion polls included), then once more; throws if
 * it never gets there. `maxPause`: while the queue does not move, the pause between tries doubles up to this
 * (for a budget of simulated hours, when a server asked to wait that long); by default it stays 15 ms.
 */
export async function settleEngine(e: SyncEngine, ms = 15_000, time: Time = realTime, maxPause = 15): Promise<void> {
  const { sleep } = time;
  let pause = 15;
  let lastPending = -1;
  const end = time.now() + ms;
  let last: unknown;
  // A sync() that never resolves is a finding of its own: say so rather than hang.
  const bounded = () =>
    Promise.race([
      e.sync(),
      sleep(Math.max(1000, end - time.now())).then(() => {
        throw new Error(`sync() has not resolved within ${ms} ms while settling: the engine is stuck`);
      }),
    ]);
  for (;;) {
    try {
      await bounded();
      last = undefined;
    } catch (error) {
      if (error instanceof Error && error.message.startsWith('sync() has not resolved')) throw error;
      last = error;
    }
    if ((await e.pending()).length === 0) break;
    if (time.now() > end) {
      const pending = await e.pending();
      throw new Error(
        `the queue never drained within ${ms} ms: ${JSON.stringify(pending.map((p) => ({ kind: p.kind, guid: p.guid, attempts: p.attempts, lastError: p.lastError })))}` +
          (last ? `; last sync error: ${String((last as Error).message)}` : ''),
      );
    }
    if (maxPause > 15) {
      const pending = (await e.pending()).length;
      pause = pending === lastPending ? Math.min(maxPause, pause * 2) : 15;
      lastPending = pending;
    }
    await sleep(pause);
  }
  // The final sync must complete; a loaded machine may time one request out, so allow a few tries.
  for (let attempt = 1; ; attempt++) {
    try {
      await bounded();
      return;
    } catch (error) {
      if (attempt >= 3 || time.now() > end) throw error;
    }
  }
}

export { picture as localPicture, serverPicture } from '../support/pictures.ts';

/** An HTTP listener on another origin: any request reaching it is a leak (it answers an empty page). */
export interface OtherOrigin {
  readonly origin: string;
  readonly port: number;
  /** Requests it received, with whether they carried credentials. */
  readonly received: { method: string; url: string; credentials: boolean }[];
}

/** Start a listener on another port, released with the scope. */
export async function otherOrigin(scope: Scope): Promise<OtherOrigin> {
  const received: OtherOrigin['received'] = [];
  const listener = http.createServer((req, res) => {
    const h = req.headers;
    received.push({
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      credentials: Boolean(h.authorization || h['x-api-key'] || h.cookie || h.api_key),
    });
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end('{"total":0,"page":1,"per_page":50,"subscriptions":[]}');
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  const port = (listener.address() as AddressInfo).port;
  scope.defer(
    () =>
      new Promise<void>((r) => {
        listener.close(() => r());
        listener.closeAllConnections();
      }),
  );
  return { origin: `http://127.0.0.1:${port}`, port, received };
}

/** What an engine's database holds, read in one transaction through a second connection. */
export interface StoreSnapshot {
  rows: StoredSubscription[];
  aliases: StoredAlias[];
  outbox: StoredChange[];
  cursor?: number;
}

/** Read an engine's database directly (a consistent snapshot: one read-only transaction). */
export async function readStore(dbName: string): Promise<StoreSnapshot> {
  const db = openSyncDatabase(dbName);
  try {
    return await db.transaction('r', [db.subscriptions, db.aliases, db.outbox, db.meta], async () => {
      const [rows, aliases, outbox, cursor] = await Promise.all([
        db.subscriptions.toArray(),
        db.aliases.toArray(),
        db.outbox.toArray(),
        db.meta.get('cursor'),
      ]);
      const snapshot: StoreSnapshot = { rows, aliases, outbox };
      if (typeof cursor?.value === 'number') snapshot.cursor = cursor.value;
      return snapshot;
    });
  } finally {
    db.close();
  }
}
