// `npm run demo [-- --port 8787 --vite-port 5173 --seed 200 --token demo-token]`: the reference server
// and the demo page's Vite dev server, together. `startDemo` is the same thing for tests.
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { createServer, type ViteDevServer } from 'vite';
import { startServer } from '../test/server/server.ts';
import type { RefServer } from '../test/server/types.ts';
import type { DemoDefaults } from './defaults.ts';

/** Options of `startDemo`. */
export interface DemoOptions {
  /** Port of the reference server; 0 picks a free one; a busy port falls back to the next free ones. @default 8787 */
  serverPort?: number;
  /** Port of the Vite dev server; 0 picks a free one; a busy port falls back to the next ones. @default 5173 */
  vitePort?: number;
  /** Subscriptions the reference server starts with. @default 200 */
  seed?: number;
  /** Bearer token the reference server accepts. @default 'demo-token' */
  token?: string;
  /** Vite's log level. @default 'info' */
  logLevel?: 'info' | 'warn' | 'error' | 'silent';
  /** Watch files and reload the page when they change (off for tests: an edit elsewhere in the repo must not reload the page under them). @default true */
  watch?: boolean;
  /** The page connects to the started server on its first open (nothing saved yet). `npm run demo` turns it on. @default false */
  autoConnect?: boolean;
}

/** A running demo. */
export interface Demo {
  /** The page to open. */
  url: string;
  /** The reference server's base URL (`http://127.0.0.1:PORT/v1`). */
  serverUrl: string;
  token: string;
  server: RefServer;
  vite: ViteDevServer;
  /** Stop both servers. */
  close(): Promise<void>;
}

const configFile = fileURLToPath(new URL('./vite.config.ts', import.meta.url));
const PORT_TRIES = 10;

/** Start the reference server on `port`, or on one of the next ports when it is taken (0: any free port). */
async function startRefServer(port: number, seed: number, token: string): Promise<RefServer> {
  for (let i = 0; ; i++) {
    try {
      return await startServer({ port: port === 0 ? 0 : port + i, seed, token });
    } catch (error) {
      const busy = (error as NodeJS.ErrnoException).code === 'EADDRINUSE';
      if (!busy || port === 0) throw error;
      if (i === PORT_TRIES - 1) return startServer({ port: 0, seed, token });
    }
  }
}

/** Start the reference server (seeded) and the demo page's dev server; the page defaults to that server. */
export async function startDemo(options: DemoOptions = {}): Promise<Demo> {
  const token = options.token ?? 'demo-token';
  const server = await startRefServer(options.serverPort ?? 8787, options.seed ?? 200, token);
  const defaults: DemoDefaults = { baseUrl: server.url, token, autoConnect: options.autoConnect ?? false };
  let vite: ViteDevServer;
  try {
    vite = await createServer({
      configFile,
      logLevel: options.logLevel ?? 'info',
      define: { __OPA_DEMO_DEFAULTS__: JSON.stringify(defaults) },
      server: {
        port: options.vitePort ?? 5173,
        strictPort: false,
        ...(options.watch === false ? { watch: null, hmr: false } : {}),
      },
    });
    await vite.listen();
  } catch (error) {
    await server.close();
    throw error;
  }
  const url = vite.resolvedUrls?.local[0];
  if (!url) {
    await Promise.all([vite.close(), server.close()]);
    throw new Error('the demo dev server did not report its URL');
  }
  let closing: Promise<void> | undefined;
  return {
    url,
    serverUrl: server.url,
    token,
    server,
    vite,
    close: () => (closing ??= Promise.all([vite.close(), server.close()]).then(() => undefined)),
  };
}

function intFrom(name: string, text: string | undefined): number | undefined {
  if (text === undefined || text === '') return undefined;
  if (!/^\d+$/.test(text)) {
    console.error(`${name} must be a non-negative integer, got ${JSON.stringify(text)}`);
    process.exit(2);
  }
  return Number(text);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      'vite-port': { type: 'string' },
      seed: { type: 'string' },
      token: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(
      'npm run demo [-- --port N] [--vite-port N] [--seed K] [--token T]\n' +
        '  --port       reference server port (env OPA_DEMO_PORT, default 8787, next free port if busy)\n' +
        '  --vite-port  demo page port (env OPA_DEMO_VITE_PORT, default 5173, next free port if busy)\n' +
        '  --seed       subscriptions to start with (env OPA_DEMO_SEED, default 200)\n' +
        '  --token      bearer token the server accepts (env OPA_DEMO_TOKEN, default demo-token)',
    );
    return;
  }
  const demo = await startDemo({
    // A newcomer who ran `npm run demo` sees the server's subscriptions at once, not a disconnected form.
    autoConnect: true,
    serverPort: intFrom('--port', values.port ?? process.env.OPA_DEMO_PORT),
    vitePort: intFrom('--vite-port', values['vite-port'] ?? process.env.OPA_DEMO_VITE_PORT),
    seed: intFrom('--seed', values.seed ?? process.env.OPA_DEMO_SEED),
    token: values.token ?? process.env.OPA_DEMO_TOKEN,
    logLevel: 'warn',
  });
  console.log(
    [
      '',
      '  opa-sync demo',
      '',
      `  Open the page:    ${demo.url}`,
      `  Server base URL:  ${demo.serverUrl}`,
      `  Token:            ${demo.token}  (bearer)`,
      `  Server controls:  ${demo.server.origin}/__admin/*`,
      '',
      '  Ctrl-C stops both.',
      '',
    ].join('\n'),
  );
  const stop = (): void => {
    console.log('stopping the demo...');
    void demo.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
