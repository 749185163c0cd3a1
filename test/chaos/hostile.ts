// The hostile world of issue 16, as fault families both chaos scenarios draw from: a device clock that steps,
// middleboxes that answer for the server (an empty 2xx, an HTML login page, a redirect to another origin, a
// 413, a dead server), a server that sends feed URLs no app should store, a Retry-After of a year, a gPodder
// server whose clock goes back, another tab that signs out and in as someone else mid-pull, and credentials
// switched to another account mid-pull. Each family can be switched on or off by name (`--faults`).
import type { SyncEngine } from '../../worker/index.ts';
import { gatewayStatusViolations } from './invariants.ts';
import { MAX_ACTIONS_PER_ANSWER } from '../../worker/gpodder/episodes.ts';
import type { Prng } from './prng.ts';
import type { ProxyRule, RewriteRule, SlowBodyRule, Transport } from './transport.ts';

/** The hostile fault families, with what each does. */
export const HOSTILE_FAULTS = {
  clock: "the device's wall clock steps back or forward (5 s to a day), at a script step or in the middle of a pull",
  'empty-2xx': 'a proxy answers an empty 200/201/202 and never forwards the request',
  'html-2xx': 'for a few simulated seconds a proxy answers every write with a 200 HTML login page while reads still work',
  'server-urls': 'answers carry javascript:/data:/vbscript:/file: or untrimmed feed URLs (lists, POST and PATCH answers, gPodder add and update_urls)',
  'retry-after': 'a 429 or 503 asks to wait a year (in seconds, as an HTTP date, or more digits than a number holds)',
  redirect: 'a middlebox redirects the request to another origin',
  'upload-413': 'gPodder: uploads of more than a few URLs are refused with 413 for a few simulated seconds',
  'timestamp-regress': "gPodder: the server's clock goes back (a reset or restored server), so its timestamps do",
  'other-tab': 'another tab clears the store in the middle of a pull and signs in to another account; later it clears again',
  'set-auth': 'gPodder: the app switches the credentials to another user in the middle of a pull; later back',
  'dead-server': 'the server refuses connections for a few simulated seconds while the app makes a burst of edits',
  'slow-body':
    'answers come in parts: slower in all than the timeout but never silent that long (to be read), with a pause past the timeout after the server applied the request, or dripping past ten timeouts',
  'gateway-down':
    "the server is down behind a proxy: every request gets the proxy's 502/503/504 HTML page for a few simulated seconds while the app edits and syncs; the status must not say online and idle meanwhile",
  'episode-renames': 'gPodder: episode upload answers carry `update_urls` for a sent media URL: a rewrite to a new http URL, `""` (refused), or a non-http URL (ignored)',
  'episode-cap': "gPodder: until calm, the full reconcile of listening state (since=1) is answered past the engine's cap (more items than an answer may hold)",
  'step-removes': "gPodder: the server's clock goes back an hour or a day, another device then removes feeds this device subscribes, and the app syncs (the full listing is the server's word)",
} as const;

/** One hostile fault family. */
export type HostileFault = keyof typeof HOSTILE_FAULTS;

export const ALL_HOSTILE = Object.keys(HOSTILE_FAULTS) as HostileFault[];

/** Parse `--faults`: `hostile` (all, the default), `polite` or `none` (only the original faults), or names. */
export function parseFaults(spec: string): HostileFault[] {
  const out = new Set<HostileFault>();
  for (const name of spec.split(',').map((x) => x.trim()).filter(Boolean)) {
    if (name === 'hostile' || name === 'all') for (const f of ALL_HOSTILE) out.add(f);
    else if (name === 'polite' || name === 'none') continue;
    else if (name.startsWith('-') && name.slice(1) in HOSTILE_FAULTS) out.delete(name.slice(1) as HostileFault);
    else if (name in HOSTILE_FAULTS) out.add(name as HostileFault);
    else throw new Error(`unknown fault family ${name}; known: hostile, polite, ${ALL_HOSTILE.join(', ')} (prefix - to leave one out)`);
  }
  return ALL_HOSTILE.filter((f) => out.has(f));
}

/** Feed URLs no app may store or hand to a page. */
export const BAD_URLS = ['javascript:alert(document.cookie)', 'data:text/html,<script>alert(1)</script>', 'vbscript:msgbox(1)', 'file:///etc/passwd', 'JavaScript:void(0)'];

/** The same URL with white space around it. */
export const untrimmed = (url: string, rng: Prng): string => rng.pick([` ${url}`, `${url} `, `\n${url}`, ` ${url}\t`]);

/** A login page a proxy shows instead of the answer. */
export const LOGIN_PAGE = '<!doctype html><html><head><title>Sign in</title></head><body><form action="/login"><input name="user"></form></body></html>';

/** A Retry-After of a year, in the spellings servers use (and one no number holds). */
export function yearLong(rng: Prng, now: number): string {
  return rng.pick([String(365 * 86_400), new Date(now + 365 * 86_400_000).toUTCString(), '9'.repeat(400), String(2 ** 31)]);
}

const isWrite = (method: string) => method !== 'GET';

/** An empty 2xx for 1-3 requests (writes mostly), never forwarded. */
export function emptyTwoXx(rng: Prng): ProxyRule {
  const writesOnly = rng.chance(0.8);
  return { name: 'empty-2xx', remaining: rng.int(1, 3), match: (method) => !writesOnly || isWrite(method), answer: { status: rng.pick([200, 200, 201, 202]), text: '' } };
}

/** An HTML login page (200) for every write during `ms` from `now`: reads go through. */
export function htmlTwoXx(rng: Prng, now: number): ProxyRule {
  const ms = rng.int(2_000, 12_000);
  return { name: 'html-2xx', until: now + ms, match: (method) => isWrite(method), answer: { status: 200, text: LOGIN_PAGE, headers: { 'Content-Type': 'text/html' } } };
}

/** A redirect to another origin for 1-3 requests. */
export function redirect(rng: Prng, otherOrigin: string): ProxyRule {
  const status = rng.pick([301, 302, 307, 308] as const);
  const method = rng.pick([undefined, 'GET', 'POST', 'PATCH', 'DELETE']);
  return { name: 'redirect', remaining: rng.int(1, 3), match: (m) => method === undefined || m === method, answer: { redirect: status, location: `${otherOrigin}/login?next=%2F` } };
}

/** 413 for every gPodder upload of more than `limit` URLs during `ms` from `now`. */
export function uploadTooLarge(rng: Prng, now: number): ProxyRule & { limit: number } {
  const limit = rng.int(1, 3);
  return {
    name: 'upload-413',
    limit,
    until: now + rng.int(2_000, 10_000),
    match: (method, _url, body) => {
      const b = (body ?? {}) as { add?: unknown[]; remove?: unknown[] };
      return method === 'POST' && (b.add?.length ?? 0) + (b.remove?.length ?? 0) > limit;
    },
    answer: { status: 413, text: JSON.stringify({ code: 413, message: 'Request Entity Too Large' }), headers: { 'Content-Type': 'application/json' } },
  };
}

/** A gateway's error page (nginx's 502, 503 or 504, HTML) for every request during 1-5 simulated seconds from `now`; `answered` counts the requests it answered. */
export function gatewayDown(rng: Prng, now: number): ProxyRule & { status: number; answered: number } {
  const status = rng.pick([502, 502, 503, 504]);
  const title = `${status} ${status === 502 ? 'Bad Gateway' : status === 503 ? 'Service Temporarily Unavailable' : 'Gateway Time-out'}`;
  const text = `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`;
  const rule = {
    name: 'gateway-down',
    status,
    answered: 0,
    until: now + rng.int(1_000, 5_000),
    match: () => true,
    answer: () => {
      rule.answered++;
      return { status, text, headers: { 'Content-Type': 'text/html' } };
    },
  };
  return rule;
}

/** What an episode upload answer's `update_urls` does to a sent media URL. */
export type EpisodeRename = 'new-url' | 'refused' | 'not-http';

/** A sent play action's episode: its feed and guid. */
export interface SentEpisode {
  podcast?: string;
  guid?: string;
}

/**
 * Episode upload answers (1-3) that rewrite one sent media URL: to a new http URL (the URL from then on of the
 * episodes sent under it in that upload), to `""` (the server refused it: the episode's `error`), or to a
 * non-http URL (ignored). The server itself stored what was sent. `renamed` is told each rewrite, with the
 * episodes the upload sent under the URL.
 */
export function episodeRenames(rng: Prng, renamed: (from: string, to: string, kind: EpisodeRename, episodes: SentEpisode[]) => void): RewriteRule {
  let n = 0;
  return {
    name: 'episode-renames',
    remaining: rng.int(1, 3),
    match: (method, url) => method === 'POST' && /episode/.test(url.pathname),
    edit(body, _method, _url, sent) {
      const actions = (Array.isArray(sent) ? sent : (sent as { actions?: unknown } | undefined)?.actions) as ({ episode?: unknown } & SentEpisode)[] | undefined;
      const urls = (actions ?? []).map((a) => a?.episode).filter((u): u is string => typeof u === 'string');
      if (typeof body !== 'object' || body === null || !urls.length) return undefined;
      const from = rng.pick(urls);
      const kind = rng.pick(['new-url', 'refused', 'not-http'] as const);
      const to = kind === 'new-url' ? `https://rewritten.example/${n++}/${from.replace(/^https?:\/\//, '')}` : kind === 'refused' ? '' : rng.pick(BAD_URLS);
      renamed(from, to, kind, (actions ?? []).filter((a) => a?.episode === from).map(({ podcast, guid }) => ({ podcast, guid })));
      const b = body as { update_urls?: unknown[] };
      return { ...b, update_urls: [...(Array.isArray(b.update_urls) ? b.update_urls : []), [from, to]] };
    },
  };
}

/** A history of more items than an episode answer may hold (`MAX_ACTIONS_PER_ANSWER`), ~2 MB: made once. */
let pastCap: string | undefined;

/**
 * Until it is taken away, every full reconcile of listening state (`since=1`, both path families) is answered
 * with more items than the engine reads; `answered` is called with each one. The engine must fail it typed, go
 * on with incremental pulls, and ask for it again only a reconcile interval later.
 */
export function episodeCap(answered: () => void): ProxyRule {
  pastCap ??= `{"timestamp":${Math.floor(Date.UTC(2026, 0, 1) / 1000)},"actions":[${'0,'.repeat(MAX_ACTIONS_PER_ANSWER)}0]}`;
  return {
    name: 'episode-cap',
    match: (method, url) => method === 'GET' && /episode/.test(url.pathname) && url.searchParams.get('since') === '1',
    answer: () => {
      answered();
      return { status: 200, text: pastCap!, headers: { 'Content-Type': 'application/json' } };
    },
  };
}

/** Connections refused during `ms` from `now`. */
export function deadServer(rng: Prng, now: number): ProxyRule {
  return { name: 'dead-server', until: now + rng.int(1_000, 5_000), match: () => true, answer: { refuse: true } };
}

type Json = Record<string, unknown>;

/** Open Podcast API answers with feed URLs no app should store (1-2 answers). */
export function opaServerUrls(rng: Prng): RewriteRule {
  let n = 0;
  return {
    name: 'server-urls',
    remaining: rng.int(1, 2),
    match: (method, url) => method !== 'DELETE' && !url.pathname.includes('/deletions/'),
    edit(body, method, url, sent) {
      if (typeof body !== 'object' || body === null) return undefined;
      const b = body as Json;
      if (method === 'GET' && Array.isArray(b.subscriptions)) {
        const entries = b.subscriptions as Json[];
        const perPage = Number(url.searchParams.get('per_page') ?? b.per_page ?? 0);
        // Room on the page: an entry of its own with a script URL (refusing or dropping it are both fine).
        // A full page: one listed entry's URL with white space around it (the same feed, trimmed).
        if (entries.length < perPage || !entries.length) entries.push({ feed_url: rng.pick(BAD_URLS), guid: `hostile-${n++}`, is_subscribed: true });
        else {
          const e = rng.pick(entries);
          e.feed_url = untrimmed(String(e.feed_url), rng);
        }
        return b;
      }
      if (method === 'POST' && Array.isArray(b.success) && b.success.length) {
        const e = rng.pick(b.success as Json[]);
        e.feed_url = rng.chance(0.5) ? untrimmed(String(e.feed_url), rng) : rng.pick(BAD_URLS);
        return b;
      }
      if (method === 'PATCH') {
        const asked = (sent as { new_feed_url?: string } | undefined)?.new_feed_url;
        b.new_feed_url = asked !== undefined && rng.chance(0.5) ? untrimmed(asked, rng) : rng.pick(BAD_URLS);
        return b;
      }
      return undefined;
    },
  };
}

/** gPodder answers with feed URLs no app should store: in a pull's `add`, or an upload's `update_urls` (1-2 answers). */
export function gpodderServerUrls(rng: Prng): RewriteRule {
  return {
    name: 'server-urls',
    remaining: rng.int(1, 2),
    match: (_method, url) => /subscription/.test(url.pathname),
    edit(body, method, _url, sent) {
      if (typeof body !== 'object' || body === null) return undefined;
      const b = body as { add?: string[]; timestamp?: number; update_urls?: [string, string][] };
      if (method === 'GET' && Array.isArray(b.add)) {
        if (b.add.length && rng.chance(0.5)) {
          const i = rng.int(0, b.add.length - 1);
          b.add[i] = untrimmed(b.add[i]!, rng);
        } else b.add.push(rng.pick(BAD_URLS));
        return b;
      }
      const added = (sent as { add?: string[] } | undefined)?.add ?? [];
      if (method === 'POST' && typeof b.timestamp === 'number' && added.length) {
        b.update_urls = [...(b.update_urls ?? []), [rng.pick(added), rng.pick(BAD_URLS)]];
        return b;
      }
      return undefined;
    },
  };
}

/** What `gatewayDownStep` needs from a scenario. */
export interface GatewayScene {
  transport: Pick<Transport, 'proxy' | 'audit' | 'inFlight'>;
  rng: Prng;
  now(): number;
  sleep(ms: number): Promise<void>;
  /** The engine as it is now (a crash replaces it). */
  engine(): Pick<SyncEngine, 'sync' | 'status'>;
  /** One local edit of the scenario's (it records it in its model). */
  edit(): Promise<void>;
  note(line: string): void;
}

/**
 * The server goes down behind a proxy: a few edits and a sync meet the gateway's error page; while it lasts,
 * the status must not say online (and idle). Checked only when no request was in flight as it went down (an
 * answer the server gave before may land after) and every request since got this gateway's page. Returns violations.
 */
export async function gatewayDownStep(scene: GatewayScene): Promise<string[]> {
  const { transport, rng, note } = scene;
  const rule = gatewayDown(rng, scene.now());
  const quiet = transport.inFlight.size === 0;
  const from = transport.audit.length;
  transport.proxy.push(rule);
  const edits = rng.int(1, 8);
  note(`hostile: the server is down behind a proxy (${rule.status}, an HTML page) for ${rule.until! - scene.now()} ms; ${edits} edits and a sync`);
  for (let i = 0; i < edits; i++) await scene.edit();
  await scene.engine().sync().then(
    () => note('gateway-down: the sync resolved'),
    (error: unknown) => note(`gateway-down: the sync rejected (${(error as { code?: string }).code ?? String(error)})`),
  );
  // Status events are coalesced (25 ms); the status read is what the app would see now.
  await scene.sleep(60);
  const status = await scene.engine().status();
  const since = transport.audit.slice(from);
  // Every request since got this gateway's page (not another middlebox's answer, such as a login page's 200).
  const checked = quiet && scene.now() < rule.until! && since.length > 0 && since.length === rule.answered && since.every((r) => r.outcome === 'proxied');
  note(`gateway-down: status ${status.phase}, network ${status.network} after ${since.length} requests (${checked ? 'checked' : 'not checked'})`);
  return checked ? gatewayStatusViolations(status, since).map((v) => `gateway-down: ${v}`) : [];
}

/** How far the device clock steps. */
export const clockStep = (rng: Prng): number => rng.pick([-86_400_000, -3_600_000, -600_000, -5_000, 5_000, 3_600_000, 86_400_000]);

/** What `middleboxFault` needs from a scenario. */
export interface MiddleboxScene {
  transport: Pick<Transport, 'proxy' | 'rewrite' | 'slow'>;
  rng: Prng;
  now: number;
  /** The engine's request timeout (ms). */
  timeout: number;
  /** The protocol's spoiled server URLs (`opaServerUrls` or `gpodderServerUrls`). */
  serverUrls(rng: Prng): RewriteRule;
  otherOrigin: string;
  note(line: string): void;
}

/**
 * Slow bodies for the next few answers, against a request timeout of `timeout` ms: a trickle (gaps under the
 * timeout, longer than it in all), a stall (a pause past it once part of the body came), or a drip (gaps under
 * it, for longer than ten timeouts in all).
 */
export function slowBody(rng: Prng, timeout: number): SlowBodyRule {
  const under = () => rng.int(Math.round(timeout * 0.3), Math.round(timeout * 0.8));
  // Each costs simulated seconds (a drip ten timeouts): few answers, so a script still settles in its budget.
  switch (rng.pick(['trickle', 'trickle', 'stall', 'drip'] as const)) {
    case 'trickle':
      return { name: 'trickle', remaining: rng.int(1, 3), parts: rng.int(2, 5), gaps: Array.from({ length: 5 }, under) };
    case 'stall':
      return { name: 'stall', remaining: rng.int(1, 2), parts: rng.int(2, 4), gaps: [under(), rng.int(Math.round(timeout * 1.2), timeout * 3)] };
    default:
      return { name: 'drip', remaining: 1, parts: 200, gaps: [Math.round(timeout / 2)] };
  }
}

/**
 * The families a proxy or a rewriting middlebox makes, the same in both protocols: empty and HTML 2xx, spoiled
 * server URLs, redirects. Returns false for any other family (the scenario's own).
 */
export function middleboxFault(kind: HostileFault, scene: MiddleboxScene): boolean {
  const { transport, rng, now, note } = scene;
  switch (kind) {
    case 'empty-2xx':
      transport.proxy.push(emptyTwoXx(rng));
      note('hostile: a proxy answers an empty 2xx (never forwarded)');
      return true;
    case 'html-2xx': {
      const rule = htmlTwoXx(rng, now);
      transport.proxy.push(rule);
      note(`hostile: a proxy answers every write with a 200 login page for ${rule.until! - now} ms`);
      return true;
    }
    case 'server-urls':
      transport.rewrite.push(scene.serverUrls(rng));
      note('hostile: the next answers carry script or untrimmed feed URLs');
      return true;
    case 'redirect':
      transport.proxy.push(redirect(rng, scene.otherOrigin));
      note('hostile: a middlebox redirects to another origin');
      return true;
    case 'slow-body': {
      const rule = slowBody(rng, scene.timeout);
      transport.slow.push(rule);
      note(`hostile: the next ${rule.remaining} answers come slowly (${rule.name}: ${rule.parts} parts, gaps ${rule.gaps.join('/')} ms)`);
      return true;
    }
    default:
      return false;
  }
}
