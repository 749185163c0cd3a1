// Called by counting-worker.ts before the engine exists (it reads `globalThis.fetch` when it starts): every fetch
// the engine makes is told on a BroadcastChannel (method, URL, time) before it goes, so the page can count the
// engine's own requests apart from what the browser adds to them (CORS preflights, Firefox's retries of a reset
// connection). A function, not a side effect of the import: the package is `sideEffects: false`, so a bare
// import would be dropped from the bundle.
import type { FetchSeen } from './api.ts';

/** Wrap this worker's `fetch` so that each call is told on the `opa-bench-fetches` channel. */
export function countFetches(): void {
  const channel = new BroadcastChannel('opa-bench-fetches');
  const original = globalThis.fetch.bind(globalThis);
  globalThis.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
    const request = input instanceof Request ? input : undefined;
    const seen: FetchSeen = { method: (init?.method ?? request?.method ?? 'GET').toUpperCase(), url: request ? request.url : String(input), at: Date.now() };
    channel.postMessage(seen);
    return original(input, init);
  };
}
