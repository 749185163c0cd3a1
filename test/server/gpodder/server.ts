import type { IncomingMessage, ServerResponse } from 'node:http';
import { createAccounts } from './accounts.ts';
import { createGpodderAdmin, type GpodderControl } from './admin.ts';
import { createApi2, type GpodderRequest } from './api2.ts';
import { createAuth } from './auth.ts';
import { createDataControl } from './control.ts';
import { createNextcloud, NEXTCLOUD_BASE } from './nextcloud.ts';
import { restore, snapshot, type GpodderState } from './snapshot.ts';
import type { GpodderServer, GpodderServerOptions } from './types.ts';
import { createFaults, faultControls } from '../faults.ts';
import { readBody, replyText, send, type Reply } from '../http.ts';
import { createSleeper, listen, wallTime } from '../listen.ts';
import { createRequestLog } from '../log.ts';
import { dataFile } from '../persist.ts';
import { createRandom, freshSeed } from '../random.ts';
import { spoil } from '../spoil.ts';

export type * from './types.ts';
export { ForeignError } from '../foreign.ts';
export { NEXTCLOUD_BASE } from './nextcloud.ts';

const BODY_LIMIT = 64 * 1024 * 1024;
/** The engine's default device id (worker/options.ts): `seed` fills its list under mygpo. */
const SEED_DEVICE = 'opa-sync';
const DEFAULT_USERS = { alice: 'alice-password' };

/** Start a gPodder v2 + Nextcloud gPodder Sync reference server on 127.0.0.1; resolves once it listens. */
export async function startGpodderServer(opts: GpodderServerOptions = {}): Promise<GpodderServer> {
  const dialect = opts.dialect ?? 'mygpo';
  const users = { ...(opts.users ?? DEFAULT_USERS) };
  if (Object.keys(users).length === 0) throw new Error('startGpodderServer needs at least one user');
  const time = opts.time ?? wallTime;
  const now = (): number => time.now();
  const initialLatency = opts.latencyMs ?? 0;
  // gpodder.net sends CORS headers; opodsync sends none (`cors: false` models it: a page then needs one origin).
  const cors = opts.cors ?? true;
  const accounts = createAccounts(users);
  const auth = createAuth(accounts);
  const file = opts.dataFile === undefined ? undefined : dataFile<GpodderState>(opts.dataFile, 'opa-sync gPodder reference server');
  const saved = file?.load();
  const randomSeed = opts.randomSeed ?? freshSeed();
  let random = createRandom(saved?.random ?? randomSeed);
  const faults = createFaults('');
  const log = createRequestLog();
  const sleeper = createSleeper(time);
  const knownPodcast = (url: string): boolean =>
    accounts.all().some(
      (a) =>
        a.list.has(url) ||
        [...a.devices.values()].some((d) => d.list.has(url)) ||
        a.episodes.log.records.some((r) => r.podcast === url) ||
        a.episodes.rows.records.some((r) => r.podcast === url),
    );
  const routes = { dialect, accounts, auth, now, knownPodcast, ahead: opts.ahead ?? 'hidden' };
  const api2 = createApi2(routes);
  const nextcloud = createNextcloud(routes);
  const data = createDataControl(dialect, accounts, () => random, now);
  let latency = initialLatency;
  let closed = false;

  const persist = (): void => file?.save(snapshot(dialect, accounts, random.state()));
  // The seed reaches every list a client reads: under mygpo the default device's (registered first, so the
  // account-wide write reaches it) and the account's (Nextcloud paths); under opodsync the one list.
  const seedAll = (): void => {
    if (!opts.seed) return;
    for (const user of Object.keys(users)) {
      if (dialect === 'mygpo') data.registerDevice(opts.seedDevice ?? SEED_DEVICE, {}, user);
      data.seed(opts.seed, { user });
    }
  };
  const control: GpodderControl = {
    reset() {
      accounts.clear();
      auth.clear();
      faults.clear();
      log.clear();
      latency = initialLatency;
      // The run's random source from its start: the seeded feeds are the same after every reset.
      random = createRandom(randomSeed);
      seedAll();
    },
    seed: (n, target) => data.seed(n, target),
    state: (target) => data.state(target),
    subscribed: (target) => data.subscribed(target),
    registerDevice: (device, update, user) => data.registerDevice(device, update, user),
    devices: (user) => data.devices(user),
    syncDevices: (groups, user) => data.syncDevices(groups, user),
    timestamp: () => data.timestamp(),
    foreign: data.foreign,
    episodeLog: (target) => data.episodeLog(target),
    feedEpisodes: (url) => data.feedEpisodes(url),
    setLatency(ms) {
      latency = ms;
    },
    ...faultControls(faults),
    log: () => log.entries(),
    clearLog: () => log.clear(),
  };
  const admin = createGpodderAdmin(control);

  const write = (req: IncomingMessage, res: ServerResponse, reply: Reply): void =>
    send(req, res, reply.status, replyText(reply, false), reply.headers, reply.contentType, cors);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = (req.method ?? 'GET').toUpperCase();
    const path = url.pathname;
    const body = await readBody(req, BODY_LIMIT);
    if (path === '/__admin' || path.startsWith('/__admin/')) {
      if (method === 'OPTIONS') return send(req, res, 204, undefined);
      const reply = admin(method, path.slice('/__admin'.length), body ?? '');
      if (method !== 'GET') persist();
      return send(req, res, reply.status, replyText(reply, false), reply.headers);
    }
    if (!path.startsWith('/api/') && path !== NEXTCLOUD_BASE && !path.startsWith(`${NEXTCLOUD_BASE}/`)) {
      return send(req, res, 404, 'Not Found', {}, 'text/plain; charset=utf-8', cors);
    }

    const request: GpodderRequest = {
      method,
      path,
      query: url.searchParams,
      body: body ?? '',
      authorization: req.headers.authorization,
      cookie: req.headers.cookie,
    };
    const authorized = auth.identify(request.authorization, path.startsWith('/api/') ? request.cookie : undefined, true).ok;
    const entry = log.record({ method, path, query: url.searchParams, headers: req.headers, body: body ?? '', authorized });
    if (latency > 0) await sleeper.sleep(latency);
    if (closed) return;

    // Faults come after the latency and before auth, as a proxy in front of the server would.
    const rule = faults.take(method, path);
    if (rule) entry.fault = rule.kind;
    if (rule && !rule.afterHandling) {
      entry.status = spoil(req, res, rule, undefined, false, cors);
      return;
    }
    let reply: Reply;
    if (method === 'OPTIONS' && cors) reply = { status: 204 };
    else if (body === undefined) reply = { status: 413, text: 'Request body too large', contentType: 'text/plain; charset=utf-8' };
    else {
      reply = api2(request) ?? nextcloud(request)!;
      if (method !== 'GET') persist();
    }
    if (rule) {
      entry.status = spoil(req, res, rule, reply, false, cors);
      return;
    }
    entry.status = reply.status;
    write(req, res, reply);
  }

  // A kept state already holds what an earlier start seeded.
  if (saved) restore(saved, dialect, accounts);
  else seedAll();
  persist();
  const server = await listen(opts.port ?? 0, handle, 'gpodder reference server');
  const origin = `http://127.0.0.1:${server.port}`;

  return {
    ...control,
    url: origin,
    origin,
    port: server.port,
    dialect,
    users,
    close() {
      if (closed) return Promise.resolve();
      closed = true;
      sleeper.cancelAll();
      return server.close();
    },
  };
}
