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

/** A page or a worker of a browser (where other tabs may share the database), as opposed to Node. */
function inBrowser(): boolean {
  return typeof (globalThis as { document?: unknown }).document !== 'undefined' || typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope !== 'undefined';
}

/** How often a leader without Web Locks says it is alive, and how long its silence must last before another takes over. */
const HEARTBEAT_MS = 1000;
const LEASE_MS = 3500;
/** A claim stands when no leader and no older claimant objects within this time. */
const CLAIM_MS = 300;

type ElectionMessage = { type: 'claim' | 'heartbeat' | 'resign'; id: string };

/**
 * Without Web Locks (older Safari, a page that is not a secure context), tabs elect a leader over a
 * BroadcastChannel: the leader sends heartbeats, a tab that hears none for a lease claims the role, and
 * the lowest id wins a tie. A leader that closes resigns; one that is killed is replaced once its lease runs out.
 */
function electOverChannel(name: string, onLead: () => void): Leadership {
  // Ordered by start time first, so a tab already running wins over a newcomer that claims at the same moment
  // (wall time: the only clock that tabs share). A lease is elapsed time, measured on this context's monotonic clock.
  const id = `${Date.now().toString(36).padStart(10, '0')}-${Math.random().toString(36).slice(2)}`;
  const channel = new BroadcastChannel(`opa-sync-leader:${name}`);
  let leader = false;
  let closed = false;
  let lastHeard = -Infinity;
  const elapsed = () => performance.now() - lastHeard;
  let claim: ReturnType<typeof setTimeout> | undefined;
  const post = (type: ElectionMessage['type']) => channel.postMessage({ type, id } satisfies ElectionMessage);
  const cancelClaim = () => {
    clearTimeout(claim);
    claim = undefined;
  };
  const startClaim = () => {
    if (closed || leader || claim) return;
    post('claim');
    claim = setTimeout(() => {
      claim = undefined;
      if (closed || leader || elapsed() < LEASE_MS) return;
      leader = true;
      post('heartbeat');
      onLead();
    }, CLAIM_MS);
  };
  channel.onmessage = (event: MessageEvent<ElectionMessage>) => {
    const message = event.data;
    if (closed || !message || message.id === id) return;
    if (message.type === 'heartbeat') {
      lastHeard = performance.now();
      cancelClaim();
      // Two leaders (a partition healed): the lower id keeps the role.
      if (leader && message.id < id) leader = false;
    } else if (message.type === 'claim') {
      if (leader) post('heartbeat');
      else if (claim && message.id < id) cancelClaim();
    } else if (message.type === 'resign') {
      lastHeard = -Infinity;
      startClaim();
    }
  };
  const timer = setInterval(() => {
    if (leader) post('heartbeat');
    else if (elapsed() >= LEASE_MS) startClaim();
  }, HEARTBEAT_MS);
  startClaim();
  return {
    get isLeader() {
      return leader;
    },
    release() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      cancelClaim();
      if (leader) post('resign');
      leader = false;
      channel.close();
    },
  };
}

/**
 * Wait for the Web Lock named after the database and hold it until released: the holder alone talks to the
 * server. A browser without Web Locks elects a leader over a BroadcastChannel instead; where neither exists
 * (Node, or a browser with neither), this context cannot see any other and leads at once.
 */
export function acquireLeadership(name: string, onLead: () => void): Leadership {
  const locks = lockManager();
  const state = { isLeader: false };
  if (!locks) {
    if (inBrowser() && typeof BroadcastChannel !== 'undefined') return electOverChannel(name, onLead);
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
