// Shared fixtures for the engine's node tests: a reference server per test, engines with unique stores.
import { afterEach } from 'vitest';
import { openSyncDatabase } from '../../src/schema.ts';
import type { SyncOptions } from '../../src/types.ts';
import { createSyncEngine, type SyncEngine } from '../../worker/index.ts';
import { startServer } from '../server/server.ts';
import type { RefServer, ServerOptions } from '../server/types.ts';

export const TOKEN = 'demo-token';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => undefined);
});

let counter = 0;
/** A database name no other test uses. */
export function uniqueDb(prefix = 'test'): string {
  return `${prefix}-${process.pid}-${Date.now()}-${counter++}`;
}

/** A reference server closed after the test. */
export async function server(options: ServerOptions = {}): Promise<RefServer> {
  // Seeded: tests read the seed data (its first entries, its unsubscribed ones) as they always were.
  const s = await startServer({ port: 0, randomSeed: 0x5eed, ...options });
  cleanups.push(() => s.close());
  return s;
}

/** An engine on its own store, quick to retry, closed after the test. */
export function engine(s: RefServer | { url: string }, options: Partial<SyncOptions> = {}): SyncEngine & { dbName: string } {
  const dbName = options.dbName ?? uniqueDb();
  const e = createSyncEngine({
    baseUrl: s.url,
    auth: { type: 'bearer', token: TOKEN },
    pullInterval: 0,
    pushDelay: 0,
    timeout: 3000,
    retry: { baseDelay: 10, maxDelay: 200 },
    ...options,
    dbName,
  });
  cleanups.push(() => e.close());
  return Object.assign(e, { dbName });
}

/** Poll until `check` returns a truthy value (or throw after `ms`). */
export async function until<T>(check: () => T | Promise<T>, ms = 5000, what = 'condition'): Promise<NonNullable<T>> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Sync until nothing is pending (retries and deletion polls included). */
export async function settle(e: SyncEngine, ms = 8000): Promise<void> {
  await until(
    async () => {
      await e.sync().catch(() => undefined);
      return (await e.pending()).length === 0;
    },
    ms,
    'an empty queue',
  );
  await e.sync();
}

export { picture, serverPicture } from '../support/pictures.ts';

/** Everything stored in an engine's database, as JSON (to look for what must not be there). */
export async function dump(dbName: string): Promise<string> {
  const db = openSyncDatabase(dbName);
  try {
    const tables = await Promise.all(db.tables.map(async (t) => [t.name, await t.toArray()] as const));
    return JSON.stringify(Object.fromEntries(tables));
  } finally {
    db.close();
  }
}

/** The requests of one method (and optional path part) in the server log. */
export function requests(s: RefServer, method: string, pathPart = '') {
  return s.log().filter((r) => r.method === method && r.path.includes(pathPart));
}

/** A fetch that lets a test rewrite or break responses. */
export function spyFetch(
  handler: (url: URL, init: RequestInit | undefined, real: typeof fetch) => Promise<Response>,
): typeof fetch {
  return ((input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    return handler(url, init, fetch);
  }) as typeof fetch;
}
