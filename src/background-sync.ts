// The page's half of sending after every page is closed: it registers the Background Sync tag the app's
// service worker answers with `opa-sync/sw` (only a window may register). Where Background Sync is absent
// (Firefox, WebKit, no service worker) it does nothing and says so.
import type { BackgroundSyncState, SyncStatus } from './types.ts';

/** The page's Background Sync registrations. */
export interface BackgroundSync {
  /** What the status says about it. */
  readonly state: BackgroundSyncState;
  /** A status snapshot with the capability flag added. */
  mark(status: SyncStatus): SyncStatus;
  /** Every status the engine reports: register when something starts to wait (or waits on a server that did not answer); returns it. */
  onStatus(status: SyncStatus): SyncStatus;
  /** The page is being hidden (perhaps closed): register again when something waits. */
  onHidden(): void;
}

interface SyncRegistration {
  sync?: { register(tag: string): Promise<void> };
}

/** The platform's service worker container, where Background Sync exists (else undefined). */
function container(): { ready: Promise<SyncRegistration> } | undefined {
  const nav = globalThis.navigator as { serviceWorker?: { ready: Promise<SyncRegistration> } } | undefined;
  return nav?.serviceWorker && typeof (globalThis as { SyncManager?: unknown }).SyncManager === 'function' ? nav.serviceWorker : undefined;
}

const waiting = (status: SyncStatus): boolean => status.pending + status.pendingEpisodes > 0;
/** A push that found no server (the device offline, the server unreachable or failing). */
const noServer = (status: SyncStatus): boolean =>
  status.network !== 'online' || ['network', 'timeout', 'server', 'rate-limited'].includes(status.lastError?.code ?? '');

/** Register `tag` when something waits and the page cannot send it itself; never throws. */
export function createBackgroundSync(tag = 'opa-sync'): BackgroundSync {
  const sw = container();
  let state: BackgroundSyncState = sw ? 'ready' : 'unsupported';
  let last: SyncStatus | undefined;
  let registering = false;
  const register = () => {
    if (!sw || registering) return;
    registering = true;
    // `ready` waits for the app's service worker: without one nothing is registered (and nothing breaks).
    sw.ready
      .then((registration) => registration.sync?.register(tag))
      .then(
        () => void (state = last && !waiting(last) ? 'ready' : 'registered'),
        () => void (state = 'failed'),
      )
      .finally(() => void (registering = false));
  };
  return {
    get state() {
      return state;
    },
    mark: (status) => ({ ...status, backgroundSync: state }),
    onStatus(status) {
      last = status;
      // Whatever the push's state: a page closed while its push is in flight (or throttled) leaves it to the tag.
      if (!waiting(status)) state = state === 'registered' ? 'ready' : state;
      else if (state === 'ready' || noServer(status)) register();
      return status;
    },
    onHidden() {
      if (last && waiting(last)) register();
    },
  };
}
