// One reference server per test file, reset before each test (the server's own contract tests share it).
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { createApi, type ApiCall } from '../server/client.ts';
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
    server = await startServer({ port: 0, ...options });
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
