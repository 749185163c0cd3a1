import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdmin, type Control } from './admin.ts';
import { createClock } from './clock.ts';
import { createDeletions } from './deletions.ts';
import { createFaults, faultControls } from './faults.ts';
import { createForeign } from './foreign.ts';
import { fail, readBody, replyText, send, type Reply } from './http.ts';
import { createListing } from './listing.ts';
import { createRequestLog } from './log.ts';
import { dataFile } from './persist.ts';
import { createRandom, freshSeed } from './random.ts';
import { createRoutes } from './routes.ts';
import { spoil } from './spoil.ts';
import { createStore, type EntryRecord } from './store.ts';
import type { RefServer, ServerOptions, ServerTime } from './types.ts';
import { toView } from './wire.ts';

export type * from './types.ts';
export { ForeignError } from './foreign.ts';

const BODY_LIMIT = 64 * 1024 * 1024;

/** What `--data` keeps of the OPA server. */
interface OpaState {
  entries: EntryRecord[];
  random: number;
  nextDeletionId: number;
}

/** Start a reference Open Podcast API server on 127.0.0.1; resolves once it listens. */
export async function startServer(opts: ServerOptions = {}): Promise<RefServer> {
  const tokens = new Set(typeof opts.token === 'string' ? [opts.token] : (opts.token ?? ['demo-token']));
  const initialLatency = opts.latencyMs ?? 0;
  const initialDeletionDelay = opts.deletionDelayMs ?? 30;
  const time: ServerTime = opts.time ?? {
    now: () => Date.now(),
    setTimeout: (callback, ms) => setTimeout(callback, ms),
    clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  };
  const clock = createClock(() => time.now());
  const file = opts.dataFile === undefined ? undefined : dataFile<OpaState>(opts.dataFile, 'opa-sync OPA reference server');
  const saved = file?.load();
  const random = createRandom(saved?.random ?? opts.randomSeed ?? freshSeed());
  const store = createStore(clock, random);
  const listing = createListing(store, random);
  const persist = (): void => file?.save({ entries: store.dump(), random: random.state(), nextDeletionId: deletions.nextId });
  const deletions = createDeletions(
    initialDeletionDelay,
    (e) => {
      store.markDeleted(e);
      persist();
    },
    time,
  );
  if (saved) {
    store.load(saved.entries);
    deletions.nextId = saved.nextDeletionId;
  }
  const faults = createFaults();
  const log = createRequestLog();
  const route = createRoutes(store, listing, deletions, {
    maxPerPage: opts.maxPerPage ?? 500,
    deleteStatus: opts.deleteStatus ?? 202,
    links: opts.links ?? 'absolute',
  });
  let latency = initialLatency;
  let codeAsString = false;
  let closed = false;
  const timers = new Set<unknown>();

  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const t = time.setTimeout(() => {
        timers.delete(t);
        resolve();
      }, ms);
      timers.add(t);
    });

  const control: Control = {
    reset() {
      store.clear();
      deletions.reset(initialDeletionDelay);
      faults.clear();
      log.clear();
      listing.reorder(0);
      latency = initialLatency;
      codeAsString = false;
      if (opts.seed) store.seed(opts.seed);
    },
    seed: (n) => store.seed(n).map(toView),
    state: () => store.entries().filter((e) => !e.into).map(toView),
    entry(guid) {
      const e = store.find(guid);
      return e && toView(e);
    },
    foreign: createForeign(store),
    setLatency(ms) {
      latency = ms;
    },
    ...faultControls(faults),
    reorder: (count) => listing.reorder(count),
    deletionOutcome: (outcome, count) => deletions.setOutcome(outcome, count),
    setDeletionDelay: (ms) => deletions.setDelay(ms),
    errorCodeAsString(on) {
      codeAsString = on;
    },
    log: () => log.entries(),
    clearLog: () => log.clear(),
  };
  const admin = createAdmin(control);

  const write = (req: IncomingMessage, res: ServerResponse, reply: Reply, asString: boolean): void =>
    send(req, res, reply.status, replyText(reply, asString), reply.headers);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = (req.method ?? 'GET').toUpperCase();
    const path = url.pathname;
    const body = await readBody(req, BODY_LIMIT);
    if (path === '/__admin' || path.startsWith('/__admin/')) {
      if (method === 'OPTIONS') return send(req, res, 204, undefined);
      const reply = admin(method, path.slice('/__admin'.length), body ?? '');
      if (method !== 'GET') persist();
      return write(req, res, reply, false);
    }
    if (path !== '/v1' && !path.startsWith('/v1/')) {
      return method === 'OPTIONS' ? send(req, res, 204, undefined) : write(req, res, fail(404), codeAsString);
    }

    const auth = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
    const authorized = auth !== null && tokens.has(auth[1].trim());
    const entry = log.record({ method, path, query: url.searchParams, headers: req.headers, body: body ?? '', authorized });
    if (latency > 0) await sleep(latency);
    if (closed) return;

    // Faults come after the latency and before auth, as a proxy in front of the server would.
    const rule = faults.take(method, path);
    if (rule) entry.fault = rule.kind;
    if (rule && !rule.afterHandling) {
      entry.status = spoil(req, res, rule, undefined, codeAsString);
      return;
    }
    let reply: Reply;
    if (method === 'OPTIONS') reply = { status: 204 };
    else if (!authorized) reply = fail(401);
    else if (body === undefined) reply = { status: 413, error: 'Request body too large' };
    else {
      const origin = `http://${req.headers.host ?? `127.0.0.1:${port}`}`;
      reply = route({ method, path: path.slice('/v1'.length) || '/', query: url.searchParams, body, origin });
      if (method !== 'GET') persist();
    }
    if (rule) {
      entry.status = spoil(req, res, rule, reply, codeAsString);
      return;
    }
    entry.status = reply.status;
    write(req, res, reply, codeAsString);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      console.error('reference server: handler failed', err);
      if (!res.headersSent) send(req, res, 500, JSON.stringify({ code: 500, message: 'Internal server error' }));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  // A kept state already holds what an earlier start seeded.
  if (opts.seed && !saved) store.seed(opts.seed);
  persist();

  return {
    ...control,
    url: `${origin}/v1`,
    origin,
    port,
    close() {
      if (closed) return Promise.resolve();
      closed = true;
      for (const t of timers) time.clearTimeout(t);
      timers.clear();
      deletions.reset(0);
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
