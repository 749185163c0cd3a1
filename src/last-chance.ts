// The page's last chance: the worker dies with the page, so what waits in the outbox goes up in requests the
// page itself starts as it goes away (`pagehide`, `freeze`) with `keepalive`, which outlive it. The copy comes
// ready-made from the worker whenever the queue changes; nothing is read or asked at that moment. Where
// `fetchLater` exists (Chromium), one deferred send of the copy stays registered too, for a tab discarded
// without `pagehide`. Nobody reads the answers: the outbox keeps each change until the engine sees it
// acknowledged, so every request in a copy is one that is harmless to send twice.
import { authHeader } from './auth-header.ts';
import { listen } from './listen.ts';
import { notify } from './notify.ts';
import { requestBase } from './base-url.ts';
import type { LastChanceRequest } from './protocol.ts';
import type { Auth, LastChanceSent } from './types.ts';

/** The page's side of the last chance. */
export interface LastChance {
  /** The worker's newest copy (empty: nothing waits). */
  update(copy: LastChanceRequest[]): void;
  /** Credentials the worker accepted: kept in page memory only, as the app keeps them. */
  setAuth(auth: Auth): void;
  /** Stop listening and drop the deferred send. */
  close(): void;
}

type FetchLater = (input: URL, init: RequestInit & { activateAfter?: number }) => unknown;

/** Where the copy goes and with which credentials; `onSend` as `ClientOptions.onLastChance`. */
export interface LastChanceOptions {
  baseUrl: string;
  auth?: Auth | undefined;
  onSend?: ((sent: LastChanceSent) => void) | undefined;
}

/** Listen for the page going away and send the copy then. */
export function createLastChance(options: LastChanceOptions): LastChance {
  let auth = options.auth;
  let copy: LastChanceRequest[] = [];
  // One send per copy: `freeze` and `pagehide` may both come; a page restored from the bfcache sends again.
  let sent = false;
  let deferred: AbortController | undefined;
  const fetchLater = (globalThis as { fetchLater?: FetchLater }).fetchLater;

  const init = (request: LastChanceRequest): [URL, RequestInit] => {
    const headers: Record<string, string> = { ...request.headers };
    const credentials = authHeader(auth);
    if (credentials) headers[credentials[0]] = credentials[1];
    // Credentials go to the base origin only, as the worker's own requests: a redirect is not followed; cookies
    // only to the page's own origin (a gPodder session), fetch's default.
    // The base is read here, not at start: a baseUrl that is no URL gets the worker's typed error, never a throw.
    return [new URL(request.path, requestBase(options.baseUrl)), { method: request.method, headers, body: request.body, keepalive: true, cache: 'no-store', redirect: 'error' }];
  };

  const drop = () => {
    deferred?.abort();
    deferred = undefined;
  };
  const defer = () => {
    drop();
    if (!fetchLater || !copy.length) return;
    const controller = new AbortController();
    try {
      for (const request of copy) {
        const [url, { keepalive: _, ...rest }] = init(request);
        fetchLater(url, { ...rest, signal: controller.signal });
      }
      deferred = controller;
    } catch {
      // Over its quota, or not allowed here: the keepalive send at `pagehide` is still there.
      controller.abort();
    }
  };

  const send = (reason: LastChanceSent['reason']): void => {
    if (sent || !copy.length) return;
    sent = true;
    // The deferred copy would go too: the same requests, twice in the 64 KiB a page may have in flight.
    drop();
    // Offline, nothing can go: the outbox keeps it all for the next open.
    if (globalThis.navigator?.onLine === false) return;
    let bytes = 0;
    for (const request of copy) {
      bytes += new TextEncoder().encode(request.body ?? '').length;
      void fetch(...init(request)).catch(() => undefined);
    }
    // The app's log must not keep the page from going: a throw is reported, never passed on.
    if (options.onSend) notify(options.onSend, { requests: copy.length, bytes, reason });
  };

  // Only `pagehide` and `freeze` are listened to with it: the event's type is the reason.
  const onHide = (event: Event) => send(event.type as LastChanceSent['reason']);
  const onBack = () => {
    sent = false;
    defer();
  };
  const unlisten = listen([
    ['w', 'pagehide', onHide],
    ['w', 'pageshow', onBack],
    ['d', 'freeze', onHide],
    ['d', 'resume', onBack],
  ]);

  return {
    update(next) {
      copy = next;
      sent = false;
      // After the task that brought it: the answer of the edit behind it comes next, and registering a deferred
      // send costs the page about a millisecond a request. Until then `pagehide` sends the copy as it is.
      setTimeout(defer);
    },
    setAuth(next) {
      auth = next;
      defer();
    },
    close() {
      unlisten();
      drop();
      copy = [];
    },
  };
}
