// Runs the real opodsync (AGPL-3.0, in ../shared/peers, never copied here) as a separate process through
// its start script, on a free 127.0.0.1 port with a fresh data directory, and ends it for sure: its own
// process group, stopped by `stop()`, and killed when the test process exits whatever happened.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the opodsync start script is, or plainly why it is not there. */
export type OpodsyncAvailability = { available: true; peersDir: string } | { available: false; reason: string };

/** A running opodsync and its controls. */
export interface Opodsync {
  /** `http://127.0.0.1:PORT`: the base of both `/api/2/...` and `/index.php/apps/gpoddersync/...`. */
  readonly baseUrl: string;
  readonly username: string;
  readonly password: string;
  readonly port: number;
  /** Its SQLite database and `php.log`; removed when the test process exits. */
  readonly dataDir: string;
  /** End the PHP server (SIGTERM, then SIGKILL); resolves once its port is closed. Safe to call twice. */
  stop(): Promise<void>;
  /** Stop if running, then start again on the same port and data directory: the data stays. */
  restart(): Promise<void>;
}

/** Options of `startOpodsync`. */
export interface OpodsyncOptions {
  /** @default 'alice' */
  username?: string;
  /** @default 'alice-password' */
  password?: string;
}

const SCRIPT = 'start-opodsync.sh';
const INSTALL_HINT = 'apt-get install -y php-cli php-sqlite3';
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The peers directory: `OPODSYNC_DIR` (the peers dir, or the opodsync dir inside it), else `../shared/peers`. */
export function opodsyncAvailability(): OpodsyncAvailability {
  const given = process.env.OPODSYNC_DIR;
  if (given) {
    const dir = [resolve(given), resolve(given, '..')].find((d) => existsSync(join(d, SCRIPT)));
    return dir
      ? { available: true, peersDir: dir }
      : { available: false, reason: `OPODSYNC_DIR=${given} holds no ${SCRIPT} (nor does its parent)` };
  }
  const shared = resolve(repoRoot, '../shared/peers');
  if (existsSync(join(shared, SCRIPT))) return { available: true, peersDir: shared };
  return {
    available: false,
    reason: `opodsync is not available: OPODSYNC_DIR is not set and ${join(shared, SCRIPT)} does not exist`,
  };
}

/** Throw the install line when php or its SQLite3 class is missing. */
function requirePhp(): void {
  try {
    execFileSync('php', ['-r', 'exit(class_exists("SQLite3") ? 0 : 1);'], { stdio: 'ignore' });
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'php is missing' : "php's SQLite3 is missing";
    throw new Error(`opodsync cannot start: ${missing}. Install with: ${INSTALL_HINT} (as root, after apt-get update)`);
  }
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok, fail) => server.once('error', fail).listen(0, '127.0.0.1', () => ok()));
  const { port } = server.address() as { port: number };
  await new Promise<void>((ok) => server.close(() => ok()));
  return port;
}

// Process groups still running, killed when this process exits (a failed or crashed test included).
const groups = new Set<number>();
const dataDirs = new Set<string>();
process.once('exit', () => {
  for (const pgid of groups) signal(-pgid, 'SIGKILL');
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // Gone already.
  }
}

/** Whether `pid` still runs (a zombie waiting for a reaper counts as ended). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Run the start script (in a new process group, which the PHP server it leaves behind stays in). */
function runScript(peersDir: string, port: number, dataDir: string, user: string, password: string): Promise<{ pid: number; pgid: number }> {
  return new Promise((ok, fail) => {
    const child = spawn('bash', [join(peersDir, SCRIPT), String(port), dataDir, user, password], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const pgid = child.pid!;
    groups.add(pgid);
    let out = '';
    let err = '';
    child.stdout!.on('data', (b: Buffer) => (out += b));
    child.stderr!.on('data', (b: Buffer) => (err += b));
    child.once('error', fail);
    child.once('exit', (code) => {
      const m = /^opodsync (\S+) user (\S+) pid (\d+)$/m.exec(out);
      if (code === 0 && m) return ok({ pid: Number(m[3]), pgid });
      signal(-pgid, 'SIGKILL');
      groups.delete(pgid);
      let log = '';
      try {
        log = readFileSync(join(dataDir, 'php.log'), 'utf8').slice(-2000);
      } catch {
        // No log written.
      }
      const hint = /php/i.test(err) && /missing/i.test(err) ? ` Install with: ${INSTALL_HINT}` : '';
      fail(new Error(`${SCRIPT} exited with ${code}: ${(err || out).trim()}${hint}${log ? `\nphp.log:\n${log}` : ''}`));
    });
  });
}

/** Resolve once nothing accepts connections on `port` any more (or give up after `ms`). */
async function portClosed(port: number, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const open = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(500) }).then(
      () => true,
      () => false,
    );
    if (!open) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`opodsync still answers on port ${port} after ${ms} ms`);
}

/** Start opodsync with one user on a free port and a fresh data directory; throws when it cannot. */
export async function startOpodsync(opts: OpodsyncOptions = {}): Promise<Opodsync> {
  const where = opodsyncAvailability();
  if (!where.available) throw new Error(where.reason);
  requirePhp();
  const username = opts.username ?? 'alice';
  const password = opts.password ?? 'alice-password';
  const dataDir = mkdtempSync(join(tmpdir(), 'opodsync-'));
  dataDirs.add(dataDir);
  const port = await freePort();
  let proc: { pid: number; pgid: number } | undefined = await runScript(where.peersDir, port, dataDir, username, password);

  const stop = async (): Promise<void> => {
    const current = proc;
    if (!current) return;
    proc = undefined;
    signal(-current.pgid, 'SIGTERM');
    signal(current.pid, 'SIGTERM');
    const deadline = Date.now() + 3000;
    while (running(current.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    signal(-current.pgid, 'SIGKILL');
    groups.delete(current.pgid);
    await portClosed(port, 5000);
  };

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    username,
    password,
    port,
    dataDir,
    stop,
    async restart() {
      await stop();
      // The script adds the user again (opodsync's users table has no unique name): the first row, and
      // with it every subscription, stays the one logins find.
      proc = await runScript(where.peersDir, port, dataDir, username, password);
    },
  };
}
