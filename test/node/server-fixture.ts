// One reference server per test file, reset before each test (the server's own contract tests share it).
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { createApi, type ApiCall } from '../server/client.ts';
import { createGpodderApi, type GpodderCall } from '../server/gpodder/client.ts';
import { startGpodderServer, type GpodderServer, type GpodderServerOptions } from '../server/gpodder/server.ts';
import { wallTime } from '../server/listen.ts';
import { startServer, type RefServer, type ServerOptions } from '../server/server.ts';

/** What a file's tests reach the server through. */
export interface ServerFixture {
  readonly server: RefServer;
  /** Calls to the server's /v1 routes (with the default token). */
  readonly api: ApiCall;
}

/** Start a server for this file (closed after it); `reset` before each test unless told otherwise. */
export function serverPerFile(options: ServerOptions = {}, { reset = true } = {}): ServerFixture {
  let server: RefServer | undefined;
  let call: ApiCall | undefined;
  beforeAll(async () => {
    server = await startServer({ port: 0, randomSeed: 0x5eed, ...options });
    call = createApi(server.url);
  });
  afterAll(() => server?.close());
  if (reset) beforeEach(() => server!.reset());
  const api = ((...args: Parameters<ApiCall>) => call!(...args)) as ApiCall;
  return {
    get server() {
      return server!;
    },
    api,
  };
}

/** What a gPodder contract test file reaches its server through. */
export interface GpodderFixture {
  readonly server: GpodderServer;
  /** Calls with alice's Basic credentials. */
  readonly api: GpodderCall;
  /** The server's clock (ms); reset to `GPODDER_EPOCH_MS` before each test, moved only by the test. */
  readonly clock: { ms: number };
}

/** Where the gPodder fixture's clock starts each test: a whole second, far from any wall clock. */
export const GPODDER_EPOCH_MS = 1_700_000_000_000;

/** Start a gPodder server on a hand-driven clock for this file; reset (clock included) before each test. */
export function gpodderServerPerFile(options: GpodderServerOptions = {}): GpodderFixture {
  const clock = { ms: GPODDER_EPOCH_MS };
  let server: GpodderServer | undefined;
  let call: GpodderCall | undefined;
  beforeAll(async () => {
    server = await startGpodderServer({ port: 0, randomSeed: 0x9bd, time: { ...wallTime, now: () => clock.ms }, ...options });
    call = createGpodderApi(server.url);
  });
  afterAll(() => server?.close());
  beforeEach(() => {
    clock.ms = GPODDER_EPOCH_MS;
    server!.reset();
  });
  const api = ((...args: Parameters<GpodderCall>) => call!(...args)) as GpodderCall;
  return {
    get server() {
      return server!;
    },
    api,
    clock,
  };
}
