// The reference server's opodsync dialect holds up against the real opodsync: one script of requests
// to both, the answers compared (status, the headers a client reads, the body with timestamps masked).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { basic } from '../server/gpodder/client.ts';
import { startGpodderServer, type GpodderServer } from '../server/gpodder/server.ts';
import { startOpodsync, type Opodsync } from '../support/opodsync.ts';
import { describeOpodsync } from '../support/opodsync-suite.ts';

/** One request; `since` is filled from the same server's upload answer at step `sinceFrom`. */
interface Step {
  name: string;
  method: string;
  path: string;
  body?: unknown;
  raw?: string;
  auth?: string | null;
  cookie?: string;
  sinceFrom?: string;
}

const ALICE = basic('alice', 'alice-password');
const SUBS = '/api/2/subscriptions/alice/web.json';
const NC = '/index.php/apps/gpoddersync';

const STEPS: Step[] = [
  { name: 'register', method: 'POST', path: '/api/2/devices/alice/web.json', body: { caption: 'Web', type: 'desktop' } },
  { name: 'first pull', method: 'GET', path: `${SUBS}?since=0` },
  { name: 'upload', method: 'POST', path: SUBS, body: { add: ['https://a.example/f', 'http://Mixed.example/x?'], remove: ['https://c.example/f'] } },
  { name: 'pull since the upload (inclusive)', method: 'GET', path: SUBS, sinceFrom: 'upload' },
  { name: 'bad URL refuses all', method: 'POST', path: SUBS, body: { add: ['https://kept-out.example/f', ' https://space.example/f'] } },
  { name: 'bad scheme', method: 'POST', path: SUBS, body: { remove: ['feed://x.example/rss'] } },
  { name: 'upper-case scheme', method: 'POST', path: SUBS, body: { add: ['HTTPS://upper.example/f'] } },
  { name: 'not a string', method: 'POST', path: SUBS, body: { add: [42] } },
  { name: 'non-ASCII kept', method: 'POST', path: SUBS, body: { add: ['https://x.example/é ü'] } },
  { name: 'duplicates in a list', method: 'POST', path: SUBS, body: { add: ['https://dup.example/f', 'https://dup.example/f'] } },
  { name: 'valid add, invalid remove', method: 'POST', path: SUBS, body: { add: ['https://kept-out-2.example/f'], remove: ['nope'] } },
  { name: 'empty object', method: 'POST', path: SUBS, body: {} },
  { name: 'user info kept', method: 'POST', path: SUBS, body: { add: ['https://u:p@userinfo.example/f'] } },
  { name: 'another user in the path', method: 'POST', path: '/api/2/subscriptions/bob/phone.json', body: { add: ['https://path-user.example/f'] } },
  { name: 'both lists', method: 'POST', path: SUBS, body: { add: ['https://both.example/f'], remove: ['https://both.example/f'] } },
  { name: 'not lists', method: 'POST', path: SUBS, body: { add: 'https://a.example/f' } },
  { name: 'not an object', method: 'POST', path: SUBS, body: [1, 2] },
  { name: 'empty body', method: 'POST', path: SUBS, raw: '' },
  { name: 'pull all', method: 'GET', path: `${SUBS}?since=0` },
  { name: 'since not a number', method: 'GET', path: `${SUBS}?since=abc` },
  { name: 'since negative', method: 'GET', path: `${SUBS}?since=-5` },
  { name: 'since with exponent', method: 'GET', path: `${SUBS}?since=1e3` },
  { name: 'since in the future', method: 'GET', path: `${SUBS}?since=99999999999` },
  { name: 'no device in path', method: 'GET', path: '/api/2/subscriptions/alice.json' },
  { name: 'bad device id', method: 'GET', path: '/api/2/subscriptions/alice/bad%20id.json?since=0' },
  { name: 'other method', method: 'DELETE', path: SUBS },
  { name: 'other format', method: 'GET', path: '/api/2/subscriptions/alice/web?since=0' },
  { name: 'unknown section', method: 'GET', path: '/api/2/nothing/alice.json' },
  { name: 'device PUT', method: 'PUT', path: '/api/2/devices/alice/web.json', body: {} },
  { name: 'bad device registration', method: 'POST', path: '/api/2/devices/alice/bad%20id.json', body: {} },
  { name: 'sync-devices', method: 'GET', path: '/api/2/sync-devices/alice.json' },
  { name: 'login', method: 'POST', path: '/api/2/auth/alice/login.json' },
  { name: 'login without credentials', method: 'POST', path: '/api/2/auth/alice/login.json', auth: null },
  { name: 'no credentials', method: 'GET', path: `${SUBS}?since=0`, auth: null },
  { name: 'unknown session cookie', method: 'GET', path: `${SUBS}?since=0`, auth: null, cookie: 'sessionid=bogus' },
  { name: 'wrong password', method: 'GET', path: `${SUBS}?since=0`, auth: basic('alice', 'nope') },
  { name: 'unknown user', method: 'GET', path: `${SUBS}?since=0`, auth: basic('bob', 'x') },
  { name: 'preflight', method: 'OPTIONS', path: SUBS, auth: null },
  { name: 'nextcloud upload', method: 'POST', path: `${NC}/subscription_change/create`, body: { add: ['https://nc.example/f'], remove: ['https://a.example/f'] } },
  { name: 'nextcloud pull', method: 'GET', path: `${NC}/subscriptions?since=0` },
  { name: 'nextcloud bad URL', method: 'POST', path: `${NC}/subscription_change/create`, body: { add: ['ftp://x.example/'] } },
  { name: 'nextcloud unknown route', method: 'GET', path: `${NC}/nothing` },
  { name: 'nextcloud no credentials', method: 'GET', path: `${NC}/subscriptions`, auth: null },
  { name: 'nextcloud wrong password', method: 'GET', path: `${NC}/subscriptions`, auth: basic('alice', 'nope') },
];

/** What must agree: status, content type, challenge, CORS, and the body with timestamps and list order masked. */
function comparable(status: number, headers: Headers, text: string): unknown {
  let body: unknown = text;
  try {
    body = text === '' ? '' : JSON.parse(text, (key, value: unknown) => (key === 'timestamp' && typeof value === 'number' ? '<seconds>' : value));
  } catch {
    // Not JSON: compared as text.
  }
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    for (const key of ['add', 'remove'] as const) {
      const list = (body as Record<string, unknown>)[key];
      if (Array.isArray(list)) list.sort();
    }
  }
  return {
    status,
    contentType: headers.get('content-type'),
    challenge: headers.get('www-authenticate'),
    cors: headers.get('access-control-allow-origin'),
    body,
  };
}

/** Run the script against `base`; returns each step's comparable answer by name. */
async function run(base: string): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>();
  const stamps = new Map<string, number>();
  for (const step of STEPS) {
    const since = step.sinceFrom === undefined ? '' : `?since=${stamps.get(step.sinceFrom)}`;
    const headers: Record<string, string> = {};
    const auth = step.auth === undefined ? ALICE : step.auth;
    if (auth !== null) headers.Authorization = auth;
    if (step.cookie !== undefined) headers.Cookie = step.cookie;
    const body = step.body !== undefined ? JSON.stringify(step.body) : step.raw;
    const res = await fetch(base + step.path + since, { method: step.method, headers, body });
    const text = await res.text();
    if (res.ok && /"timestamp"/.test(text)) stamps.set(step.name, (JSON.parse(text) as { timestamp: number }).timestamp);
    out.set(step.name, comparable(res.status, res.headers, text));
  }
  return out;
}

describeOpodsync('the opodsync dialect against the real opodsync', () => {
  let peer: Opodsync;
  let ref: GpodderServer;
  beforeAll(async () => {
    [peer, ref] = await Promise.all([startOpodsync(), startGpodderServer({ dialect: 'opodsync', cors: false })]);
  });
  afterAll(async () => {
    await Promise.all([peer?.stop(), ref?.close()]);
  });

  it('answers the same script the same way, step by step', async () => {
    const [real, ours] = await Promise.all([run(peer.baseUrl), run(ref.url)]);
    for (const step of STEPS) expect(ours.get(step.name), step.name).toEqual(real.get(step.name));
  });
});
