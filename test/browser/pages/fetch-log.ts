// Installed before the engine loads (see logged-worker.ts): every fetch the worker makes is announced to the
// page as `{ opaFetch: 'METHOD /path' }`, so a test can tell which tab's worker sent a request, in any engine.
const realFetch = globalThis.fetch.bind(globalThis);

globalThis.fetch = (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
  const url = input instanceof Request ? input.url : String(input);
  const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
  postMessage({ opaFetch: `${method} ${new URL(url).pathname}` });
  return realFetch(input, init);
};
