/** Leadership of one database across the contexts (tabs, workers) of an origin. */
export interface Leadership {
  /** Whether this context is the leader now. */
  readonly isLeader: boolean;
  /** Give up leadership (or stop waiting for it). */
  release(): void;
}

interface LockManagerLike {
  request(name: string, options: { signal?: AbortSignal }, callback: () => Promise<void>): Promise<void>;
}

function lockManager(): LockManagerLike | undefined {
  const nav = (globalThis as { navigator?: { locks?: LockManagerLike } }).navigator;
  return nav?.locks;
}

/**
 * Wait for the Web Lock named after the database and hold it until released: the holder alone talks to
 * the server. Where Web Locks do not exist (Node), this context is the only one and leads at once.
 */
export function acquireLeadership(name: string, onLead: () => void): Leadership {
  const locks = lockManager();
  const state = { isLeader: false };
  if (!locks) {
    state.isLeader = true;
    queueMicrotask(onLead);
    return { get isLeader() { return state.isLeader; }, release() { state.isLeader = false; } };
  }
  const abort = new AbortController();
  let releaseLock: (() => void) | undefined;
  locks
    .request(`opa-sync-leader:${name}`, { signal: abort.signal }, () => {
      state.isLeader = true;
      onLead();
      return new Promise<void>((resolve) => {
        releaseLock = resolve;
      });
    })
    .catch(() => undefined);
  return {
    get isLeader() {
      return state.isLeader;
    },
    release() {
      state.isLeader = false;
      abort.abort();
      releaseLock?.();
    },
  };
}
