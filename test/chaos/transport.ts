// The network between the engine and the reference server, as the chaos suite bends it: delays on either side
// of the server (a delay after the server answered is a request applied whose answer is lost to a timeout),
// `next` links rewritten to other origins, crash hooks that kill the engine around a request, and an audit
// of every request the engine made (origin, credentials).
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
}

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

function abortable(ms: number, signal: AbortSignal | null | undefined): Promise<void> {
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
    fetch: (async (input: globalThis.RequestInfo | URL, init?: RequestInit) => {
      const raw = typeof input === 'string' ? input : input instanceof URL ? input.href : (input as Request).url;
      const url = new URL(raw);
      const method = (init?.method ?? 'GET').toUpperCase();
      const id = ++n;
      const at = (where: string) => transport.inFlight.set(id, `${method} ${url.pathname}${url.search}: ${where}`);
      at('starting');
      try {
        return await forward(id, method, url, init, at);
      } finally {
        transport.inFlight.delete(id);
      }
    }) as typeof fetch,
  };

  async function forward(n: number, method: string, url: URL, init: RequestInit | undefined, at: (where: string) => void): Promise<Response> {
    transport.sent.push({ method, url: url.href, origin: url.origin, credentials: hasCredentials(init?.headers) });
    at('before hook');
    await transport.before?.({ method, url, n });

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
    if (sim) return simulated(sim, method, url, init, crashing, at);
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
    const w = transport.weather;
    const isList = method === 'GET' && /\/subscriptions\/?$/.test(url.pathname);
    let text = answer.text;
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
    return respond(text, answer);
  }
  return transport;
}
