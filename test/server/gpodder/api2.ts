// The gPodder v2 endpoints a subscription client uses, under `/api/2`.
import { DEVICE_ID, deviceView, registerDevice, syncDevices, type Account, type Accounts } from './accounts.ts';
import type { Auth } from './auth.ts';
import { pullMygpoEpisodes, uploadMygpoEpisodes, type EpisodeUploadOutcome } from './episodes-mygpo.ts';
import { pullOpodsyncEpisodes, uploadOpodsyncEpisodes } from './episodes-opodsync.ts';
import { mygpoSince, opodsyncSince } from './since.ts';
import { readList, uploadAs } from './targets.ts';
import type { GpodderDialect, WireChanges, WireSyncStatus } from './types.ts';
import { mygpoVoice, opodsyncVoice, type Voice } from './voice.ts';
import { parseJson, type Reply } from '../http.ts';
import { isObject } from '../validate.ts';

/** An API request, reduced to what the handlers read. */
export interface GpodderRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  body: string;
  authorization?: string;
  cookie?: string;
}

/** What the handlers share. */
export interface RouteContext {
  dialect: GpodderDialect;
  accounts: Accounts;
  auth: Auth;
  /** Server time in ms. */
  now(): number;
  /** What a mygpo pull answers of the actions stamped ahead of the server's clock (`GpodderServerOptions.ahead`). */
  ahead: 'hidden' | 'listed';
  /** Whether the server knows a podcast by this URL (any user subscribed to it or sent an action for it): mygpo's `podcast=` 404s otherwise. */
  knownPodcast(url: string): boolean;
}

const ROUTE = /^\/api\/2\/(auth|devices|subscriptions|sync-devices|episodes)\/([^/]+?)(?:\/([^/]+?))?\.json$/;
// opodsync's sections: a path in one of them is judged by its format before anything else.
const OPODSYNC_SECTION = /^\/api\/2\/(auth|subscriptions|devices|updates|episodes|favorites|settings|lists|sync-devices|tags?|data)\//;
const DEVICE_TYPES = new Set(['desktop', 'laptop', 'mobile', 'server', 'other']);

/** A path segment decoded; undefined when badly escaped. */
const decode = (text: string): string | undefined => {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
};

/** Create the `/api/2` handler; answers undefined for paths outside it. */
export function createApi2(ctx: RouteContext): (req: GpodderRequest) => Reply | undefined {
  const mygpo = ctx.dialect === 'mygpo';
  const voice: Voice = mygpo ? mygpoVoice : opodsyncVoice;
  const seconds = (): number => Math.floor(ctx.now() / 1000);

  /** The request body as JSON: mygpo and opodsync word a missing or broken body differently. */
  const input = (req: GpodderRequest, account: Account): { value: unknown } | Reply => {
    if (mygpo && req.body === '') return voice.error(400, 'POST data must not be empty');
    const parsed = parseJson(req.body);
    if (parsed) return parsed;
    return voice.error(400, mygpo ? `Could not decode request body for user ${account.name}: ${req.body}` : 'Malformed JSON: Syntax error');
  };
  const isReply = (x: { value: unknown } | Reply): x is Reply => !('value' in x);

  const devices = (req: GpodderRequest, account: Account, id: string): Reply => {
    if (req.method === 'GET' && id === '') {
      const list = [...account.devices.values()].map(deviceView);
      return voice.ok(mygpo ? list : list.map((d) => ({ ...d, subscriptions: 0, deviceid: d.id, name: d.caption })));
    }
    if (req.method !== 'POST' || id === '') return voice.error(mygpo ? 405 : 400, 'Wrong request method');
    if (!DEVICE_ID.test(id)) return voice.error(400, 'Invalid device ID');
    const body = input(req, account);
    if (isReply(body)) return body;
    const { caption, type } = isObject(body.value) ? body.value : {};
    if (!isObject(body.value) || (caption !== undefined && typeof caption !== 'string') || (type !== undefined && typeof type !== 'string')) {
      return voice.error(400, 'Invalid device data');
    }
    if (mygpo && type !== undefined && !DEVICE_TYPES.has(type)) return voice.error(400, 'invalid device type');
    registerDevice(account, id, { caption, type });
    return voice.done('Device updated');
  };

  const subscriptions = (req: GpodderRequest, account: Account, id: string): Reply => {
    if (!DEVICE_ID.test(id)) return mygpo ? voice.error(404, 'Not Found') : voice.error(400, 'Invalid device ID');
    if (req.method === 'GET') {
      const known = account.devices.get(id);
      if (mygpo) {
        const since = mygpoSince(req.query.get('since'));
        if (!since.ok) return voice.error(400, since.message);
        // mygpo needs the device registered before it answers for it.
        if (!known) return voice.error(404, 'Not Found');
        const now = ctx.now();
        const until = ctx.ahead === 'listed' ? Infinity : now;
        const body: WireChanges = { ...known.list.netChanges(since.seconds * 1000, until), timestamp: Math.floor(now / 1000) };
        return voice.ok(body);
      }
      const since = opodsyncSince(req.query.get('since'));
      const delta = readList(ctx.dialect, account).rowsChangedIn((s) => s >= since);
      return voice.ok({ ...delta, update_urls: [], timestamp: seconds() } satisfies WireChanges);
    }
    if (req.method !== 'POST') return mygpo ? voice.error(405, 'Method Not Allowed') : voice.error(501, 'Not implemented yet');
    const body = input(req, account);
    if (isReply(body)) return body;
    // mygpo creates a device it does not know on upload; opodsync does not look at it.
    const device = mygpo ? registerDevice(account, id) : undefined;
    const outcome = uploadAs(ctx.dialect, account, device, body.value, ctx.now());
    return outcome.ok ? voice.ok(outcome.result) : voice.error(400, outcome.message);
  };

  /** An episode upload's outcome as the dialect's server answers it. */
  const uploaded = (outcome: EpisodeUploadOutcome): Reply => {
    if (outcome.ok) return voice.ok(outcome.result);
    return outcome.status === 500 ? voice.crash(outcome.message) : voice.error(outcome.status, outcome.message);
  };

  // mygpo routes `episodes/{user}.json` only; opodsync reads no device from the path (and ignores one).
  const episodes = (req: GpodderRequest, account: Account, arg: string): Reply => {
    if (mygpo) {
      if (arg !== '') return voice.error(404, 'Not Found');
      if (req.method === 'GET') {
        const q = req.query;
        const query = { since: q.get('since'), podcast: q.get('podcast'), device: q.get('device'), aggregated: q.get('aggregated') };
        const pulled = pullMygpoEpisodes(account, query, ctx.now(), ctx.knownPodcast);
        return pulled.ok ? voice.ok(pulled.body) : voice.error(pulled.status, pulled.message);
      }
      if (req.method !== 'POST') return voice.error(405, 'Method Not Allowed');
      const parsed = parseJson(req.body);
      if (!parsed) return voice.error(400, `Could not decode episode update POST data for user ${account.name}: ${req.body}`);
      return uploaded(uploadMygpoEpisodes(account, parsed.value, ctx.now()));
    }
    if (req.method === 'GET') return voice.ok(pullOpodsyncEpisodes(account, req.query.get('since'), ctx.now()));
    if (req.method !== 'POST') return voice.error(405, `Invalid HTTP method: ${req.method}`);
    const body = input(req, account);
    if (isReply(body)) return body;
    return uploaded(uploadOpodsyncEpisodes(account, body.value, ctx.now()));
  };

  const syncStatus = (account: Account): WireSyncStatus => ({
    synchronized: account.groups.map((g) => [...g]),
    'not-synchronized': [...account.devices.keys()].filter((id) => !account.groups.some((g) => g.includes(id))),
  });

  const sync = (req: GpodderRequest, account: Account): Reply => {
    // opodsync has no such endpoint: its router answers 200 with an empty body.
    if (!mygpo) return { status: 200, text: '', contentType: 'application/json' };
    if (req.method === 'GET') return voice.ok(syncStatus(account));
    if (req.method !== 'POST') return voice.error(405, 'Method Not Allowed');
    const body = input(req, account);
    if (isReply(body)) return body;
    const v = isObject(body.value) ? body.value : {};
    const groups = v.synchronize ?? [];
    const stop = v['stop-synchronize'] ?? [];
    const okIds = (ids: unknown): ids is string[] => Array.isArray(ids) && ids.every((x) => typeof x === 'string');
    if (!isObject(body.value) || !Array.isArray(groups) || !groups.every(okIds) || !okIds(stop)) {
      return voice.error(400, 'synchronize must be a list of lists of device ids');
    }
    const unknown = [...groups.flat(), ...stop].find((d) => !account.devices.has(d));
    if (unknown !== undefined) return voice.error(404, 'Not Found');
    syncDevices(account, groups, stop, ctx.now());
    return voice.ok(syncStatus(account));
  };

  const authSection = (req: GpodderRequest, action: string): Reply => {
    if (req.method !== 'POST') return voice.error(405, `Invalid HTTP method: ${req.method}`);
    if (action === 'logout') {
      ctx.auth.logout(req.cookie);
      return voice.done('Logged out');
    }
    if (action !== 'login') return voice.error(404, `Unknown login action: ${action}`);
    const caller = ctx.auth.identify(req.authorization, undefined, false);
    if (!caller.ok) return voice.unauthorized(caller.message);
    const cookie = ctx.auth.login(caller.account);
    const done = voice.done('Logged in!');
    return { ...done, headers: { ...done.headers, 'Set-Cookie': `sessionid=${cookie}; Path=/; HttpOnly` } };
  };

  return (req) => {
    if (!req.path.startsWith('/api/')) return undefined;
    const m = ROUTE.exec(req.path);
    const user = m && decode(m[2]);
    const arg = m && (m[3] === undefined ? '' : decode(m[3]));
    if (!mygpo && !req.path.endsWith('.json') && OPODSYNC_SECTION.test(req.path)) return voice.error(501, 'output format is not implemented');
    if (!m || user == null || arg == null) return voice.error(404, mygpo ? 'Not Found' : 'Unknown or malformed API request');
    const section = m[1];
    if (section === 'auth') return authSection(req, arg);
    const caller = ctx.auth.identify(req.authorization, req.cookie, true);
    if (!caller.ok) return voice.unauthorized(caller.message);
    // mygpo refuses a path naming another user; opodsync ignores the name (and accepts "current").
    if (mygpo && user.toLowerCase() !== caller.account.name.toLowerCase()) return voice.unauthorized('Invalid username in URL');
    if (section === 'devices') return devices(req, caller.account, arg);
    if (section === 'sync-devices') return arg === '' ? sync(req, caller.account) : voice.error(404, 'Not Found');
    if (section === 'episodes') return episodes(req, caller.account, arg);
    if (arg === '') return voice.error(400, 'Invalid device ID');
    return subscriptions(req, caller.account, arg);
  };
}
