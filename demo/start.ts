// `npm run demo [-- --port 8787 --vite-port 5173 --seed 200 --token demo-token]`: the reference server
// and the demo page's Vite dev server, together. `startDemo` is the same thing for tests.
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { createServer, type ViteDevServer } from 'vite';
import { startGpodderServer } from '../test/server/gpodder/server.ts';
import type { GpodderServer } from '../test/server/gpodder/types.ts';
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

/** The demo page's dev server, its defaults pointing at `defaults`; `closeServer` is called if it fails. */
async function startPage(defaults: DemoDefaults, options: DemoOptions, closeServer: () => Promise<void>): Promise<{ url: string; vite: ViteDevServer }> {
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
    await closeServer();
    throw error;
  }
  const url = vite.resolvedUrls?.local[0];
  if (!url) {
    await Promise.all([vite.close(), closeServer()]);
    throw new Error('the demo dev server did not report its URL');
  }
  return { url, vite };
}

/** Start the reference server (seeded) and the demo page's dev server; the page defaults to that server. */
export async function startDemo(options: DemoOptions = {}): Promise<Demo> {
  const token = options.token ?? 'demo-token';
  const server = await startRefServer(options.serverPort ?? 8787, options.seed ?? 200, token);
  const defaults: DemoDefaults = { protocol: 'opa', baseUrl: server.url, token, username: '', password: '', autoConnect: options.autoConnect ?? false };
  const { url, vite } = await startPage(defaults, options, () => server.close());
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

/** A running demo against the gPodder reference server. */
export interface GpodderDemo {
  url: string;
  /** The server's base URL (`http://127.0.0.1:PORT`): `/api/2/…` and `/index.php/apps/gpoddersync/…` below it. */
  serverUrl: string;
  protocol: 'gpodder' | 'nextcloud';
  username: string;
  password: string;
  server: GpodderServer;
  vite: ViteDevServer;
  close(): Promise<void>;
}

/** Start the gPodder reference server (mygpo dialect: it answers a page on another origin) and the demo page. */
export async function startGpodderDemo(protocol: 'gpodder' | 'nextcloud', options: DemoOptions = {}): Promise<GpodderDemo> {
  const username = 'alice';
  const password = 'alice-password';
  const port = options.serverPort ?? 8787;
  let server: GpodderServer | undefined;
  for (let i = 0; !server; i++) {
    try {
      server = await startGpodderServer({ port: port === 0 || i >= PORT_TRIES ? 0 : port + i, users: { [username]: password } });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || port === 0) throw error;
    }
  }
  const s = server;
  // mygpo keeps a list per device: the client's default device exists first, so the account-wide seed reaches
  // it as well as the Nextcloud paths' list.
  s.registerDevice('opa-sync');
  s.seed(options.seed ?? 200);
  const defaults: DemoDefaults = { protocol, baseUrl: s.url, token: '', username, password, autoConnect: options.autoConnect ?? false };
  const { url, vite } = await startPage(defaults, options, () => s.close());
  let closing: Promise<void> | undefined;
  return {
    url,
    serverUrl: s.url,
    protocol,
    username,
    password,
    server: s,
    vite,
    close: () => (closing ??= Promise.all([vite.close(), s.close()]).then(() => undefined)),
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
      protocol: { type: 'string' },
      port: { type: 'string' },
      'vite-port': { type: 'string' },
      seed: { type: 'string' },
      token: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(
      'npm run demo [-- --protocol opa|gpodder|nextcloud] [--port N] [--vite-port N] [--seed K] [--token T]\n' +
        '  --protocol   the reference server to start: Open Podcast API (default), or gPodder (both gPodder paths)\n' +
        '  --port       reference server port (env OPA_DEMO_PORT, default 8787, next free port if busy)\n' +
        '  --vite-port  demo page port (env OPA_DEMO_VITE_PORT, default 5173, next free port if busy)\n' +
        '  --seed       subscriptions to start with (env OPA_DEMO_SEED, default 200)\n' +
        '  --token      bearer token the OPA server accepts (env OPA_DEMO_TOKEN, default demo-token)',
    );
    return;
  }
  const protocol = values.protocol ?? 'opa';
  if (protocol !== 'opa' && protocol !== 'gpodder' && protocol !== 'nextcloud') {
    console.error(`--protocol must be opa, gpodder or nextcloud, got ${JSON.stringify(protocol)}`);
    process.exit(2);
  }
  const options: DemoOptions = {
    // A newcomer who ran `npm run demo` sees the server's subscriptions at once, not a disconnected form.
    autoConnect: true,
    serverPort: intFrom('--port', values.port ?? process.env.OPA_DEMO_PORT),
    vitePort: intFrom('--vite-port', values['vite-port'] ?? process.env.OPA_DEMO_VITE_PORT),
    seed: intFrom('--seed', values.seed ?? process.env.OPA_DEMO_SEED),
    token: values.token ?? process.env.OPA_DEMO_TOKEN,
    logLevel: 'warn',
  };
  const demo = protocol === 'opa' ? await startDemo(options) : await startGpodderDemo(protocol, options);
  const credentials = 'token' in demo ? `  Token:            ${demo.token}  (bearer)` : `  User:             ${demo.username} / ${demo.password}  (HTTP Basic, ${demo.protocol} paths)`;
  console.log(
    [
      '',
      '  opa-sync demo',
      '',
      `  Open the page:    ${demo.url}`,
      `  Server base URL:  ${demo.serverUrl}`,
      credentials,
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
