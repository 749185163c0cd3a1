// The bench page: the real client (spawning the real module worker, bundled by Vite as an app's build would)
// and the baseline worker, side by side, exposed as `window.bench` for the Node runner.
import { Dexie } from 'dexie';
import { createSyncClient, type SyncClient } from '../../../src/index.ts';
import type { BaselineArgs, BaselineEpisodesMessage, BaselineMessage, BenchApi, PullArgs, Responsiveness } from './api.ts';

// The page's own Dexie (used to count rows) must not run in its slow debug mode either.
Dexie.debug = false;

function clientOptions(args: PullArgs, extra: { pushDelay?: number } = {}) {
  const server = args.gpodder
    ? { protocol: 'gpodder' as const, device: args.gpodder.device, auth: { type: 'basic' as const, username: args.gpodder.username, password: args.token } }
    : { auth: { type: 'bearer' as const, token: args.token } };
  return {
    baseUrl: args.baseUrl,
    ...server,
    dbName: args.dbName,
    pageSize: args.pageSize,
    pullInterval: 0,
    ...extra,
  };
}

/** Watch the main thread: 'longtask' entries and the lateness of a 10 ms timer loop. */
function watchMainThread(): () => Responsiveness {
  let longestTaskMs = 0;
  let longTasks = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      longTasks++;
      longestTaskMs = Math.max(longestTaskMs, entry.duration);
    }
  });
  // Only Chromium has 'longtask' entries; elsewhere the figure is missing, not a reassuring 0.
  const measured = PerformanceObserver.supportedEntryTypes?.includes('longtask') ?? false;
  if (measured) observer.observe({ type: 'longtask', buffered: false });
  let maxLoopGapMs = 0;
  let stopped = false;
  let expected = performance.now() + 10;
  const tick = () => {
    if (stopped) return;
    const now = performance.now();
    maxLoopGapMs = Math.max(maxLoopGapMs, now - expected);
    expected = now + 10;
    setTimeout(tick, 10);
  };
  setTimeout(tick, 10);
  return () => {
    stopped = true;
    for (const entry of observer.takeRecords()) {
      longTasks++;
      longestTaskMs = Math.max(longestTaskMs, entry.duration);
    }
    observer.disconnect();
    return { longestTaskMs: measured ? longestTaskMs : null, longTasks, maxLoopGapMs };
  };
}

async function countRows(dbName: string, table: string): Promise<number> {
  const db = new Dexie(dbName);
  try {
    await db.open();
    return await db.table(table).count();
  } finally {
    db.close();
  }
}

let client: SyncClient | undefined;
let held: Worker | undefined;
let onlineAt = performance.now();
window.addEventListener('online', () => {
  onlineAt = performance.now();
});

const bench: BenchApi = {
  async enginePull(args) {
    let changeEvents = 0;
    let statusEvents = 0;
    const stop = watchMainThread();
    const t0 = performance.now();
    const c = createSyncClient(clientOptions(args));
    // What an app does with events: look at them (cheaply).
    c.on('change', (e) => void (changeEvents += e.guids.length > 0 ? 1 : 0));
    c.on('status', () => void statusEvents++);
    const report = await c.sync();
    const ms = performance.now() - t0;
    const responsiveness = stop();
    await c.close();
    const count = await countRows(args.dbName, 'subscriptions');
    return { ms, report, count, changeEvents, statusEvents, ...responsiveness };
  },

  async baselinePull(args: BaselineArgs) {
    const t0 = performance.now();
    const worker = new Worker(new URL('./baseline-worker.ts', import.meta.url), { type: 'module', name: 'opa-bench-baseline' });
    const done = await new Promise<BaselineMessage>((resolve, reject) => {
      worker.onmessage = (e: MessageEvent<BaselineMessage>) => resolve(e.data);
      worker.onerror = (e) => reject(new Error(`baseline worker: ${e.message}`));
      worker.postMessage(args);
    });
    const ms = performance.now() - t0;
    if (args.hold) held = worker;
    else worker.terminate();
    if (done.type === 'error') throw new Error(`baseline worker: ${done.message}`);
    const count = await countRows(args.dbName, 'subscriptions');
    return { ms, requests: done.requests, entries: done.entries, count };
  },

  async releaseBaseline() {
    held?.terminate();
    held = undefined;
  },

  async open(args, extra) {
    if (client) throw new Error('a client is already open');
    client = createSyncClient(clientOptions(args, extra));
    await client.status();
  },

  async sync() {
    if (!client) throw new Error('no open client');
    const t0 = performance.now();
    const report = await client.sync();
    return { ms: performance.now() - t0, report };
  },

  async updates(plan) {
    if (!client) throw new Error('no open client');
    const out: number[] = [];
    for (const { guid, change } of plan) {
      const t0 = performance.now();
      await client.update(guid, change);
      out.push(performance.now() - t0);
    }
    return out;
  },

  async subscription(guid) {
    if (!client) throw new Error('no open client');
    return client.subscription(guid);
  },

  async status() {
    if (!client) throw new Error('no open client');
    return client.status();
  },

  async pendingCount() {
    if (!client) throw new Error('no open client');
    return (await client.pending()).length;
  },

  async drainedAfterOnline(timeoutMs) {
    if (!client) throw new Error('no open client');
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      if ((await client.pending()).length === 0) return performance.now() - onlineAt;
      if (performance.now() > deadline) throw new Error(`the queue did not drain within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  },

  async episodeFirstSync(args) {
    const t0 = performance.now();
    const c = createSyncClient(clientOptions(args));
    const report = await c.sync();
    const ms = performance.now() - t0;
    await c.close();
    return { ms, report, count: await countRows(args.dbName, 'episodes') };
  },

  async baselineEpisodes(args) {
    const t0 = performance.now();
    const worker = new Worker(new URL('./episodes-baseline-worker.ts', import.meta.url), { type: 'module', name: 'opa-bench-baseline-episodes' });
    const done = await new Promise<BaselineEpisodesMessage>((resolve, reject) => {
      worker.onmessage = (e: MessageEvent<BaselineEpisodesMessage>) => resolve(e.data);
      worker.onerror = (e) => reject(new Error(`episodes baseline worker: ${e.message}`));
      worker.postMessage(args);
    });
    const ms = performance.now() - t0;
    worker.terminate();
    if (done.type === 'error') throw new Error(`episodes baseline worker: ${done.message}`);
    return { ms, requests: done.requests, actions: done.actions, count: await countRows(args.dbName, 'episodes') };
  },

  async progress(plan) {
    if (!client) throw new Error('no open client');
    for (const { ref, position, total } of plan) await client.setProgress(ref, { position, total });
  },

  async episode(ref) {
    if (!client) throw new Error('no open client');
    return client.episode(ref);
  },

  async episodesDrainedAfterOnline(timeoutMs) {
    if (!client) throw new Error('no open client');
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      if ((await client.status()).pendingEpisodes === 0) return performance.now() - onlineAt;
      if (performance.now() > deadline) throw new Error(`the episode changes were not uploaded within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  },

  async close() {
    const c = client;
    client = undefined;
    await c?.close();
  },

  async deleteDb(name, timeoutMs) {
    // Hygiene between runs, not a figure: every run uses a database of its own, so a delete that never
    // finishes is reported and the bench goes on.
    return Promise.race([Dexie.delete(name).then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), timeoutMs))]);
  },
};

window.bench = bench;
document.getElementById('state')!.textContent = 'ready';
