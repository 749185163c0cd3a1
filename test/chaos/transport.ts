// The network between the engine and the reference server, as the chaos suite bends it: delays on either side
// of the server (a delay after the server answered is a request applied whose answer is lost to a timeout),
// `next` links rewritten to other origins, crash hooks that kill the engine around a request, and an audit
// of every request the engine made (origin, credentials).
//
// Hostile middleboxes (simulated time only): `proxy` rules answer a request themselves, never forwarding it
// (an empty 2xx, an HTML login page, a redirect to another origin, a 413, a dead server); `rewrite` rules spoil
// a forwarded answer (feed URLs a server should never send). The audit also keeps, per request, the changes
// its payload carries and when it was made: no change may be in two requests at once (`overlaps`), and the
// request rate per change is checked against the backoff schedule (invariants.ts, `spinViolations`).
import type { Prng } from './prng.ts';
import type { Simulation } from './sim.ts';

/** How rough the network is; probabilities are per request. */
export interface Weather {
  /** Chance of a delay before the request reaches the server. */
  delayBefore: number;
  /** Chance of a delay after the server answered (the server applied it; the engine may time out). */
  delayAfter: number;
  /** Upper bound of a delay, ms (above the engine's timeout makes timeouts). */
  maxDelay: number;
  /** Chance that a list page's `next` is rewritten to point at another origin. */
  foreignNext: number;
}

/** An answer a middlebox gives instead of the server's. */
export type ProxyAnswer =
  | { status: number; text: string; headers?: Record<string, string> }
  /** A redirect to `location`: fetch follows it, refuses it or hands it over as its `redirect` option says. */
  | { redirect: 301 | 302 | 303 | 307 | 308; location: string }
  /** No answer at all: the connection is refused (a dead server, not `navigator` offline). */
  | { refuse: true };

/** A middlebox rule: requests it matches (while it lasts) get its answer and never reach the server. */
export interface ProxyRule {
  /** For traces and stats. */
  name: string;
  match(method: string, url: URL, body: unknown): boolean;
  /** How many more requests it answers (undefined: any number). */
  remaining?: number;
  /** Virtual time after which it no longer answers (undefined: no end). */
  until?: number;
  answer: ProxyAnswer | ((method: string, url: URL, body: unknown) => ProxyAnswer);
}

/** A rule that spoils the body of a forwarded 2xx answer. */
export interface RewriteRule {
  name: string;
  match(method: string, url: URL): boolean;
  remaining: number;
  /** The new body (JSON parsed); undefined leaves it as it was (and does not use up the rule). */
  edit(body: unknown, method: string, url: URL, sent: unknown): unknown;
}

/**
 * Answers whose bodies come in parts (simulated time only): `gaps[i]` ms before part i, the last gap for the rest.
 * The headers come at once; the engine's timeout measures the silences, and bounds the whole.
 */
export interface SlowBodyRule {
  /** What it does, for counts: `trickle`, `stall`, `drip`. */
  name: string;
  remaining: number;
  parts: number;
  gaps: number[];
}

/** One request as the audit keeps it. */
export interface AuditedRequest {
  /** Virtual ms when the engine made it. */
  at: number;
  method: string;
  path: string;
  /** The changes its payload carries (a subscription's path, an added feed URL, an uploaded URL); pulls: the page asked. */
  keys: string[];
  /** How it ended for the engine. */
  outcome?: 'answered' | 'proxied' | 'redirect' | 'threw';
}

/** The changes a request carries, as keys: two requests in flight together must share none. */
export function payloadKeys(method: string, url: URL, body: unknown): string[] {
  const path = decodeURIComponent(url.pathname);
  if (method === 'GET') {
    // A pull: its page (the `since` varies from pull to pull; the page asked is what repeats in a loop).
    if (/\/deletions\//.test(path)) return [`poll ${path}`];
    return [`pull ${path}${url.searchParams.has('page') ? `?page=${url.searchParams.get('page')}` : ''}`];
  }
  const b = (body ?? {}) as { subscriptions?: { feed_url?: unknown }[]; add?: unknown[]; remove?: unknown[] };
  if (Array.isArray(b.add) || Array.isArray(b.remove)) return [...(b.add ?? []), ...(b.remove ?? [])].map((u) => `url ${String(u)}`);
  if (method === 'POST' && Array.isArray(b.subscriptions)) return b.subscriptions.map((x) => `add ${String(x.feed_url)}`);
  if ((method === 'PATCH' || method === 'DELETE') && /\/subscriptions\/.+/.test(path)) return [`sub ${path}`];
  return [];
}

export const CALM: Weather = { delayBefore: 0, delayAfter: 0, maxDelay: 0, foreignNext: 0 };

/** Where to kill the engine: around the `at`-th request (1-based) that `match` selects. */
export interface CrashPlan {
  at: number;
  /** before: never sent. after: the server applied it, the answer is lost. returned: the answer is handed over, then the kill. */
  phase: 'before' | 'after' | 'returned';
  match?(method: string, url: URL): boolean;
  /** Kill the engine (close it without waiting). */
  kill(): void;
}

/** One request the engine made. */
export interface SentRequest {
  method: string;
  url: string;
  origin: string;
  credentials: boolean;
}

/** A write the engine gave up on after it was sent (timeout, kill): the server may still apply it, late. */
export interface AbandonedWrite {
  method: string;
  url: string;
  body: unknown;
}

/** A request about to be forwarded, for scenario hooks (e.g. a foreign change between two pages). */
export interface OutgoingRequest {
  method: string;
  url: URL;
  /** 1-based count of requests so far. */
  n: number;
  /** The JSON body it carries (undefined: none, or not JSON). */
  body: unknown;
}

/**
 * An answer lost on the way back (simulated time only): the server handled a request the rule matches with a
 * 2xx, `then` runs (another device's change, say: it lands after the request and before the engine can know),
 * and the engine gets a network error instead of the answer.
 */
export interface LostAnswerRule {
  match(method: string, url: URL, body: unknown): boolean;
  /** How many more answers it loses. */
  remaining: number;
  then(): void | Promise<void>;
}

export interface Transport {
  readonly fetch: typeof fetch;
  weather: Weather;
  crash: CrashPlan | undefined;
  /** Called before a request is forwarded. */
  before: ((req: OutgoingRequest) => void | Promise<void>) | undefined;
  readonly sent: SentRequest[];
  /** Writes abandoned in flight: a server that was still holding one may apply it after newer ones. */
  readonly abandoned: AbandonedWrite[];
  /** The request the crash plan killed the engine around (`METHOD /path`), once it fired. */
  crashedAt: string | undefined;
  /** Requests not finished yet, with where each one is (for a hung scenario's report). */
  readonly inFlight: Map<number, string>;
  /** Counts of what the transport did, for summaries. */
  readonly stats: Record<string, number>;
  /**
   * Simulated time only: ms the server holds each request before handling it (a request the engine gave up
   * on meanwhile still lands). With real time, use the server's own latency control instead.
   */
  latency: number;
  /** Simulated time only: middlebox rules, the first that matches answers (see ProxyRule). */
  proxy: ProxyRule[];
  /** Simulated time only: rules that spoil forwarded answers (see RewriteRule). */
  rewrite: RewriteRule[];
  /** Simulated time only: answers whose bodies come slowly, the first rule with some left (see SlowBodyRule). */
  slow: SlowBodyRule[];
  /** Simulated time only: answers lost after the server handled the request, the first rule that matches (see LostAnswerRule). */
  lose: LostAnswerRule[];
  /** Every request with its time and payload keys (simulated time only: `at` is virtual). */
  readonly audit: AuditedRequest[];
  /** A change found in two requests in flight at once: what, and the two requests. */
  readonly overlaps: string[];
  /**
   * Called once when the engine makes more than RUNAWAY requests within one simulated second (a pull's pages
   * counting as one): a loop that does not let simulated time move (0 ms timers) would otherwise only end at
   * the real-time watchdog.
   */
  onRunaway: ((message: string) => void) | undefined;
}

/** A scenario stopped because the engine ran away (see `onRunaway`). */
export class RunawayError extends Error {
  override readonly name = 'RunawayError';
}

/** Requests within one simulated second that no backoff schedule explains (see `onRunaway`). */
export const RUNAWAY = 1000;

/** Options of the transport. */
export interface TransportOptions {
  /** The server's origin (`http://127.0.0.1:PORT`). */
  serverOrigin: string;
  /** An origin nothing may be sent to. */
  otherOrigin: string;
  rng: Prng;
  /** Run in simulated time: delays on its clock, real requests one at a time (see sim.ts). */
  sim?: Simulation;
}

/** A whole answer, read. */
interface Answer {
  status: number;
  statusText: string;
  headers: Headers;
  text: string;
}

/** Reject with the signal's reason when it aborts first. */
function raced<T>(work: Promise<T>, signal: AbortSignal | null | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** Resolve after `ms` of real time; reject with the signal's reason when it aborts first. */
export function abortable(ms: number, signal: AbortSignal | null | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * `text` as a body that comes in `parts`, `gaps[i]` ms before part i (the last gap for the rest), waited with
 * `wait` (simulated or real time); like a platform fetch's body, it fails once `signal` aborts.
 */
export function partedBody(
  text: string,
  { parts, gaps }: Pick<SlowBodyRule, 'parts' | 'gaps'>,
  wait: (ms: number, signal: AbortSignal | null | undefined) => Promise<void>,
  signal: AbortSignal | null | undefined,
): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  const size = Math.max(1, Math.ceil(bytes.length / parts));
  let i = 0;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      signal?.addEventListener('abort', () => controller.error(signal.reason), { once: true });
    },
    async pull(controller) {
      if (i * size >= bytes.length) return controller.close();
      await wait(gaps[Math.min(i, gaps.length - 1)]!, signal);
      controller.enqueue(bytes.slice(i * size, ++i * size));
    },
  });
}

/** The JSON body a request carries (undefined when none or not JSON). */
function bodyOf(init: RequestInit | undefined): unknown {
  if (typeof init?.body !== 'string') return undefined;
  try {
    return JSON.parse(init.body);
  } catch {
    return undefined;
  }
}

function hasCredentials(headers: HeadersInit | undefined): boolean {
  const h = new Headers(headers);
  return h.has('authorization') || h.has('x-api-key') || h.has('api_key') || h.has('cookie');
}

/** A response with this body text and the status and headers of `from` (null-body statuses keep no body). */
function respond(text: string, from: Pick<Answer, 'status' | 'statusText' | 'headers'>): Response {
  const nullBody = from.status === 204 || from.status === 205 || from.status === 304;
  return new Response(nullBody || text === '' ? null : text, { status: from.status, statusText: from.statusText, headers: from.headers });
}

/** Create the transport around the real fetch. */
export function createTransport(options: TransportOptions): Transport {
  const { rng, sim } = options;
  const wait = (ms: number, signal: AbortSignal | null | undefined) => (sim ? sim.sleep(ms, signal) : abortable(ms, signal));
  const server = new URL(options.serverOrigin);
  const other = new URL(options.otherOrigin);
  const stats: Record<string, number> = {};
  const count = (what: string) => void (stats[what] = (stats[what] ?? 0) + 1);
  let n = 0;
  let matched = 0;

  /** Ways to write a `next` link that leaves the base URL's origin. */
  const foreignLinks = (page: number, perPage: string): string[] => {
    const q = `page=${page}&per_page=${perPage}`;
    return [
      `${other.origin}/v1/subscriptions?${q}`,
      `//127.0.0.1:${other.port}/v1/subscriptions?${q}`,
      `http://localhost:${server.port}/v1/subscriptions?${q}`,
      `https://127.0.0.1:${server.port}/v1/subscriptions?${q}`,
      `http://user:pw@127.0.0.1:${other.port}/v1/subscriptions?${q}`,
    ];
  };

  const transport: Transport = {
    weather: { ...CALM },
    crash: undefined,
    crashedAt: undefined,
    before: undefined,
    sent: [],
    abandoned: [],
    inFlight: new Map(),
    stats,
    latency: 0,
    proxy: [],
    rewrite: [],
    slow: [],
    lose: [],
    audit: [],
    overlaps: [],
    onRunaway: undefined,
    fetch: (async (input: globalThis.RequestInfo | URL, init?: RequestInit) => {
      const raw = typeof input === 'string' ? input : input instanceof URL ? input.href : (input as Request).url;
      const url = new URL(raw);
      const method = (init?.method ?? 'GET').toUpperCase();
      const id = ++n;
      const at = (where: string) => transport.inFlight.set(id, `${method} ${url.pathname}${url.search}: ${where}`);
      at('starting');
      const entry: AuditedRequest = { at: sim ? sim.now() : Date.now(), method, path: url.pathname, keys: payloadKeys(method, url, bodyOf(init)) };
      transport.audit.push(entry);
      // A pull's drain counts once (its first page): a listing of many pages is read in one simulated instant,
      // and a loop asks the first page again too.
      if (!(method === 'GET' && Number(url.searchParams.get('page')) > 1)) recent.push(entry.at);
      while (recent[0]! < entry.at - 1000) recent.shift();
      if (recent.length > RUNAWAY && !runaway) {
        runaway = true;
        transport.onRunaway?.(`spin: ${recent.length} requests within one simulated second (the last ${method} ${url.pathname}): stopped`);
      }
      // A change in two requests at once: the second may be applied after a newer one, or twice.
      const writes = entry.keys.filter((k) => !k.startsWith('pull ') && !k.startsWith('poll '));
      for (const key of writes) {
        const other = active.get(key);
        if (other) transport.overlaps.push(`${key}: ${method} ${url.pathname} (request ${id}) sent while request ${other} carrying it was in flight`);
      }
      for (const key of writes) active.set(key, id);
      try {
        const response = await forward(id, method, url, init, at, entry);
        entry.outcome ??= 'answered';
        return response;
      } catch (error) {
        entry.outcome ??= 'threw';
        throw error;
      } finally {
        for (const key of writes) if (active.get(key) === id) active.delete(key);
        transport.inFlight.delete(id);
      }
    }) as typeof fetch,
  };
  /** Payload keys of requests in flight, to the request carrying them. */
  const active = new Map<string, number>();
  /** Times of the requests in the last simulated second. */
  const recent: number[] = [];
  let runaway = false;

  async function forward(n: number, method: string, url: URL, init: RequestInit | undefined, at: (where: string) => void, entry: AuditedRequest): Promise<Response> {
    transport.sent.push({ method, url: url.href, origin: url.origin, credentials: hasCredentials(init?.headers) });
    at('before hook');
    await transport.before?.({ method, url, n, body: bodyOf(init) });

    const w = transport.weather;
    const signal = init?.signal;
    const crash = transport.crash;
    const crashing = crash && (!crash.match || crash.match(method, url)) && ++matched === crash.at ? crash : undefined;
    if (crashing) {
      count(`crash-${crashing.phase}`);
      transport.crashedAt = `${method} ${url.pathname}`;
    }
    if (crashing?.phase === 'before') {
      crashing.kill();
      throw new TypeError('the worker was killed before the request left');
    }
    if (w.delayBefore > 0 && rng.chance(w.delayBefore)) {
      count('delay-before');
      at('delay before');
      await wait(rng.int(1, w.maxDelay), signal);
    }
    at('fetch');
    if (sim) {
      const proxied = await proxyAnswer(sim, method, url, init, entry);
      if (proxied) return proxied;
      return simulated(sim, method, url, init, crashing, at);
    }
    let response: Response;
    try {
      response = await fetch(url, init);
    } catch (error) {
      // Given up before any answer: the request may sit in the server (latency) and land after newer ones.
      if (init?.signal?.aborted) abandon(method, url, init);
      throw error;
    }
    const isList = method === 'GET' && /\/subscriptions\/?$/.test(url.pathname);
    const delayAfter = w.delayAfter > 0 && rng.chance(w.delayAfter);
    const rewriteNext = isList && response.status === 200 && w.foreignNext > 0 && rng.chance(w.foreignNext);
    if (!crashing && !delayAfter && !rewriteNext) return response;
    // Read the whole answer: the server has handled the request by now.
    at('reading the body');
    let text = await response.text();
    if (rewriteNext) {
      try {
        const body = JSON.parse(text) as { next?: string; page?: number; per_page?: number };
        const page = (body.page ?? Number(url.searchParams.get('page') ?? 1)) + 1;
        body.next = rng.pick(foreignLinks(page, url.searchParams.get('per_page') ?? String(body.per_page ?? 50)));
        text = JSON.stringify(body);
        count('foreign-next');
      } catch {
        // A spoiled body stays spoiled.
      }
    }
    if (crashing?.phase === 'after') {
      crashing.kill();
      throw new TypeError('the worker was killed before it read the answer');
    }
    if (delayAfter) {
      count('delay-after');
      at('delay after');
      await wait(rng.int(1, w.maxDelay), signal);
    }
    if (crashing?.phase === 'returned') queueMicrotask(() => crashing.kill());
    return respond(text, response);
  }

  /** A middlebox's answer, when a rule takes the request (it never reaches the server). */
  async function proxyAnswer(sim: Simulation, method: string, url: URL, init: RequestInit | undefined, entry: AuditedRequest): Promise<Response | undefined> {
    const body = bodyOf(init);
    const rule = transport.proxy.find((r) => (r.remaining === undefined || r.remaining > 0) && (r.until === undefined || sim.now() < r.until) && r.match(method, url, body));
    if (!rule) return undefined;
    if (rule.remaining !== undefined) rule.remaining--;
    count(`proxy-${rule.name}`);
    const answer = typeof rule.answer === 'function' ? rule.answer(method, url, body) : rule.answer;
    // A middlebox answers at once, but not within the same turn: let other work interleave as a socket would.
    await sim.sleep(0, init?.signal);
    if ('refuse' in answer) {
      entry.outcome = 'threw';
      throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED') });
    }
    if ('redirect' in answer) {
      entry.outcome = 'redirect';
      const mode = init?.redirect ?? 'follow';
      // What fetch does with a redirect: refuse it (a network error), hand it over (Node gives the 3xx itself), or follow it.
      if (mode === 'error') throw new TypeError('fetch failed', { cause: new Error('unexpected redirect') });
      if (mode === 'manual') return new Response(null, { status: answer.redirect, headers: { Location: answer.location } });
      const target = new URL(answer.location, url);
      transport.sent.push({ method, url: target.href, origin: target.origin, credentials: hasCredentials(init?.headers) });
      return sim.exclusive(async () => {
        const response = await fetch(target, { ...init, signal: undefined, redirect: 'manual' });
        return respond(await response.text(), response);
      });
    }
    entry.outcome = 'proxied';
    return new Response(answer.status === 204 || answer.text === '' ? null : answer.text, { status: answer.status, headers: answer.headers });
  }

  /** Remember a write the engine gave up on after it left: the server may still apply it, late. */
  function abandon(method: string, url: URL, init: RequestInit | undefined): void {
    if (method === 'GET') return;
    let body: unknown;
    try {
      body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
    } catch {
      body = init?.body;
    }
    transport.abandoned.push({ method, url: url.href, body });
    count('abandoned-write');
  }

  /** The rest of a request in simulated time: it lands after the latency, alone, whatever the engine does meanwhile. */
  async function simulated(sim: Simulation, method: string, url: URL, init: RequestInit | undefined, crashing: CrashPlan | undefined, at: (where: string) => void): Promise<Response> {
    const signal = init?.signal;
    const latency = transport.latency;
    const landing = (async (): Promise<Answer> => {
      if (latency > 0) await sim.sleep(latency);
      return sim.exclusive(async () => {
        const response = await fetch(url, { ...init, signal: undefined });
        return { status: response.status, statusText: response.statusText, headers: response.headers, text: await response.text() };
      });
    })();
    let answer: Answer;
    try {
      answer = await raced(landing, signal);
    } catch (error) {
      if (signal?.aborted) {
        landing.catch(() => undefined);
        abandon(method, url, init);
      }
      throw error;
    }
    if (answer.status >= 200 && answer.status < 300) {
      const body = bodyOf(init);
      const lost = transport.lose.find((r) => r.remaining > 0 && r.match(method, url, body));
      if (lost) {
        lost.remaining--;
        count('lost-answer-rule');
        await lost.then();
        throw new TypeError('fetch failed', { cause: new Error('the connection closed before the answer came') });
      }
    }
    const w = transport.weather;
    const isList = method === 'GET' && /\/subscriptions\/?$/.test(url.pathname);
    let text = answer.text;
    if (answer.status >= 200 && answer.status < 300) {
      const rule = transport.rewrite.find((r) => r.remaining > 0 && r.match(method, url));
      if (rule) {
        try {
          const edited = rule.edit(text.trim() === '' ? undefined : JSON.parse(text), method, url, bodyOf(init));
          if (edited !== undefined) {
            text = JSON.stringify(edited);
            rule.remaining--;
            count(`rewrite-${rule.name}`);
          }
        } catch {
          // A spoiled body stays spoiled.
        }
      }
    }
    if (isList && answer.status === 200 && w.foreignNext > 0 && rng.chance(w.foreignNext)) {
      try {
        const body = JSON.parse(text) as { next?: string; page?: number; per_page?: number };
        const page = (body.page ?? Number(url.searchParams.get('page') ?? 1)) + 1;
        body.next = rng.pick(foreignLinks(page, url.searchParams.get('per_page') ?? String(body.per_page ?? 50)));
        text = JSON.stringify(body);
        count('foreign-next');
      } catch {
        // A spoiled body stays spoiled.
      }
    }
    if (crashing?.phase === 'after') {
      crashing.kill();
      throw new TypeError('the worker was killed before it read the answer');
    }
    if (w.delayAfter > 0 && rng.chance(w.delayAfter)) {
      count('delay-after');
      at('delay after');
      await sim.sleep(rng.int(1, w.maxDelay), signal);
    }
    if (crashing?.phase === 'returned') queueMicrotask(() => crashing.kill());
    const slow = transport.slow.find((r) => r.remaining > 0);
    if (slow && text !== '' && answer.status !== 204) {
      slow.remaining--;
      count(`slow-body-${slow.name}`);
      return new Response(partedBody(text, slow, (ms, until) => sim.sleep(ms, until), signal), { status: answer.status, statusText: answer.statusText, headers: answer.headers });
    }
    return respond(text, answer);
  }
  return transport;
}

/**
 * Whether a failure is a redirect refused as a network error (what `redirect: 'error'` makes of one), judged by
 * the error's own causes, not by which request ended last (another request may have been redirected meanwhile).
 */
export function isRedirectAsNetwork(error: unknown): boolean {
  let e: unknown = error;
  for (let i = 0; i < 5 && e; i++) {
    if (/unexpected redirect/.test(String((e as { message?: unknown }).message))) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
