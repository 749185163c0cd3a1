// The reference server's opodsync dialect serves episode actions as the real opodsync does: one script
// of requests to both, answers compared (status, content type, body with "now" masked and the action
// list's order ignored: opodsync's SQLite answers in index order, the reference in upload order).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { basic } from '../server/gpodder/client.ts';
import { startGpodderServer, type GpodderServer } from '../server/gpodder/server.ts';
import { startOpodsync, type Opodsync } from '../support/opodsync.ts';
import { describeOpodsync } from '../support/opodsync-suite.ts';

interface Step {
  name: string;
  method: string;
  path: string;
  body?: unknown;
  raw?: string;
  auth?: string | null;
}

const ALICE = basic('alice', 'alice-password');
const EP = '/api/2/episodes/alice.json';
const NC = '/index.php/apps/gpoddersync';
const F = 'https://parity.example/feed.xml';
const e = (n: number): string => `https://parity.example/e${n}.mp3`;
const play = (n: number, extra: Record<string, unknown> = {}) => ({ podcast: F, episode: e(n), action: 'play', ...extra });
// 2024-01-02T03:04:05Z
const T = 1704164645;

const STEPS: Step[] = [
  { name: 'empty log', method: 'GET', path: `${EP}?since=0` },
  { name: 'full action', method: 'POST', path: EP, body: [play(1, { timestamp: '2024-01-02T03:04:05', started: 1, position: 2, total: 3, guid: 'g1', device: 'phone', extra: { a: 1 } })] },
  { name: 'zoned and fractional times', method: 'POST', path: EP, body: [play(2, { timestamp: '2024-01-02T05:04:05+02:00' }), play(3, { timestamp: '2024-01-02T03:04:06.789Z' })] },
  { name: 'upper-case action', method: 'POST', path: EP, body: [{ podcast: F, episode: e(4), action: 'PLAY', timestamp: '2024-01-02T03:04:04' }] },
  { name: 'no timestamp is now', method: 'POST', path: EP, body: [play(5)] },
  { name: 'timestamp "0" is now', method: 'POST', path: EP, body: [play(6, { timestamp: '0' })] },
  { name: 'any action string', method: 'POST', path: EP, body: [{ podcast: F, episode: e(7), action: 5, timestamp: '2024-01-01T00:00:00' }] },
  { name: 'empty list', method: 'POST', path: EP, body: [] },
  { name: 'not a list', method: 'POST', path: EP, body: { podcast: F } },
  { name: 'empty body', method: 'POST', path: EP, raw: '' },
  { name: 'missing key', method: 'POST', path: EP, body: [{ podcast: F, episode: e(8) }] },
  { name: 'null action', method: 'POST', path: EP, body: [{ podcast: F, episode: e(8), action: null }] },
  { name: 'item not an object', method: 'POST', path: EP, body: ['x'] },
  { name: 'bad episode URL', method: 'POST', path: EP, body: [play(8, { episode: 'ftp://x.example/a.mp3' })] },
  { name: 'number as podcast', method: 'POST', path: EP, body: [{ podcast: 123, episode: e(8), action: 'play' }] },
  { name: 'list as podcast', method: 'POST', path: EP, body: [{ podcast: ['x'], episode: e(8), action: 'play' }] },
  { name: 'bad timestamp', method: 'POST', path: EP, body: [play(8, { podcast: 'https://kept-out.example/f', timestamp: 'yesterday-ish' })] },
  { name: 'one bad item refuses all', method: 'POST', path: EP, body: [play(9, { podcast: 'https://kept-out-2.example/f', timestamp: '2024-01-02T03:04:05' }), play(10, { episode: 'nope' })] },
  { name: 'a device in the path', method: 'POST', path: '/api/2/episodes/alice/phone.json', body: [play(11, { timestamp: '2024-01-03T00:00:00' })] },
  { name: 'another feed', method: 'POST', path: EP, body: [{ podcast: 'https://other.example/rss', episode: 'https://other.example/1.mp3', action: 'download', timestamp: '2024-01-05T00:00:00' }] },
  { name: 'pull all', method: 'GET', path: `${EP}?since=0` },
  { name: 'pull without since', method: 'GET', path: EP },
  { name: 'since inclusive', method: 'GET', path: `${EP}?since=${T}` },
  { name: 'since one later', method: 'GET', path: `${EP}?since=${T + 1}` },
  { name: 'since not a number', method: 'GET', path: `${EP}?since=abc` },
  { name: 'pull with a device in the path', method: 'GET', path: `/api/2/episodes/alice/phone.json?since=${T + 2}` },
  { name: 'feeds subscribed by actions', method: 'GET', path: '/api/2/subscriptions/alice/web.json?since=0' },
  { name: 'other method', method: 'DELETE', path: EP },
  { name: 'no credentials', method: 'GET', path: EP, auth: null },
  { name: 'nextcloud upload', method: 'POST', path: `${NC}/episode_action/create`, body: [play(12, { timestamp: '2024-02-01T00:00:00', action: 'download' })] },
  { name: 'nextcloud pull', method: 'GET', path: `${NC}/episode_action?since=1706745600` },
  { name: 'nextcloud GET on create', method: 'GET', path: `${NC}/episode_action/create?since=1706745600` },
  { name: 'nextcloud POST on the list route', method: 'POST', path: `${NC}/episode_action`, body: [play(13, { timestamp: '2024-02-02T00:00:00' })] },
  { name: 'nextcloud other method', method: 'PUT', path: `${NC}/episode_action`, body: [] },
  { name: 'nextcloud bad item', method: 'POST', path: `${NC}/episode_action/create`, body: [{ podcast: F }] },
];

/** The time of an ISO text in ms, if it is one. */
const isoMs = (v: string): number | undefined => (/^\d{4}-\d\d-\d\dT/.test(v) ? Date.parse(v) : undefined);

/** What must agree: status, content type, the body with "now" masked (a 500: its status; the report's form follows the User-Agent). */
function comparable(status: number, headers: Headers, text: string): unknown {
  if (status === 500) return { status };
  const now = Date.now();
  let body: unknown = text;
  {
    try {
      body =
        text === ''
          ? ''
          : JSON.parse(text, (key, value: unknown) => {
              if (key === 'timestamp' && typeof value === 'number') return '<seconds>';
              if (key === 'timestamp' && typeof value === 'string' && Math.abs((isoMs(value) ?? 0) - now) < 120_000) return '<now>';
              return value;
            });
    } catch {
      // Not JSON: compared as text.
    }
  }
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const b = body as Record<string, unknown>;
    if (Array.isArray(b.actions)) b.actions = b.actions.map((a) => JSON.stringify(a)).sort();
    for (const key of ['add', 'remove']) if (Array.isArray(b[key])) (b[key] as string[]).sort();
  }
  return { status, contentType: headers.get('content-type'), body };
}

/** Run the script against `base`; returns each step's comparable answer by name. */
async function run(base: string): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>();
  for (const step of STEPS) {
    const headers: Record<string, string> = {};
    const auth = step.auth === undefined ? ALICE : step.auth;
    if (auth !== null) headers.Authorization = auth;
    const body = step.body !== undefined ? JSON.stringify(step.body) : step.raw;
    const res = await fetch(base + step.path, { method: step.method, headers, body });
    out.set(step.name, comparable(res.status, res.headers, await res.text()));
  }
  return out;
}

describeOpodsync('episode actions: the opodsync dialect against the real opodsync', () => {
  let peer: Opodsync;
  let ref: GpodderServer;
  beforeAll(async () => {
    [peer, ref] = await Promise.all([startOpodsync(), startGpodderServer({ dialect: 'opodsync' })]);
  });
  afterAll(async () => {
    await Promise.all([peer?.stop(), ref?.close()]);
  });

  it('answers the same script the same way, step by step', async () => {
    const [real, ours] = await Promise.all([run(peer.baseUrl), run(ref.url)]);
    for (const step of STEPS) expect(ours.get(step.name), step.name).toEqual(real.get(step.name));
  });
});
