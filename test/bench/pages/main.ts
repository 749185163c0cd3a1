// The bench page: the real client (spawning the real module worker, bundled by Vite as an app's build would)
// and the baseline worker, side by side, exposed as `window.bench` for the Node runner.
import { Dexie } from 'dexie';
import { createSyncClient, type SyncClient } from '../../../src/index.ts';
import type { BaselineArgs, BaselineEpisodesMessage, BaselineMessage, BenchApi, BulkPutMessage, FetchSeen, OpenExtra, PullArgs, RawWriteMessage, Responsiveness } from './api.ts';

// The page's own Dexie (used to count rows) must not run in its slow debug mode either.
Dexie.debug = false;

function clientOptions(args: PullArgs, { countFetches, ...extra }: OpenExtra = {}) {
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
    ...(countFetches ? { worker: new Worker(new URL('./counting-worker.ts', import.meta.url), { type: 'module', name: 'opa-sync' }) } : {}),
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

/** Poll `check` every 5 ms until it holds. */
async function until(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** One message to the bulk-put worker, answered once it is done. */
function askBulk(m: BulkPutMessage): Promise<void> {
  const worker = bulk;
  if (!worker) return Promise.reject(new Error('no bulk-put worker'));
  return new Promise<void>((resolve, reject) => {
    worker.onmessage = (e: MessageEvent<string>) => (e.data === 'ok' ? resolve() : reject(new Error(`bulk-put worker: ${e.data}`)));
    worker.onerror = (e) => reject(new Error(`bulk-put worker: ${e.message}`));
    worker.postMessage(m);
  });
}

let client: SyncClient | undefined;
/** What the counting worker told (reset at each `open`). */
let fetchesSeen: FetchSeen[] = [];
new BroadcastChannel('opa-bench-fetches').onmessage = (e: MessageEvent<FetchSeen>) => void fetchesSeen.push(e.data);
/** Snapshots the store `mountEpisodeStore` mounted has made. */
let snapshotsSeen = 0;
let held: Worker | undefined;
/** The import's baseline worker, between `openBulkBaseline` and `closeBulkBaseline`. */
let bulk: Worker | undefined;
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
    fetchesSeen = [];
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

  async updatesWithRaw(plan, rawDb) {
    if (!client) throw new Error('no open client');
    const worker = new Worker(new URL('./raw-write-worker.ts', import.meta.url), { type: 'module', name: 'opa-bench-raw-write' });
    const ask = (m: RawWriteMessage) =>
      new Promise<void>((resolve, reject) => {
        worker.onmessage = (e: MessageEvent<string>) => (e.data === 'ok' ? resolve() : reject(new Error(`raw write worker: ${e.data}`)));
        worker.postMessage(m);
      });
    const row = (guid: string, i: number, type: 'row' | 'edit' = 'row') => ({ type, row: { guid, feedUrl: `https://raw.example/${i}/feed.xml`, isSubscribed: i % 2 === 0, at: Date.now() } });
    try {
      await ask({ type: 'open', dbName: rawDb });
      // Its first transactions (the database's creation, JIT): not measured.
      for (let i = 0; i < 5; i++) {
        await ask(row(`warm-${i}`, i));
        await ask(row(`warm-${i}`, i, 'edit'));
      }
      const engine: number[] = [];
      const raw: number[] = [];
      const edit: number[] = [];
      for (const [i, { guid, change }] of plan.entries()) {
        let t0 = performance.now();
        await client.update(guid, change);
        engine.push(performance.now() - t0);
        t0 = performance.now();
        await ask(row(guid, i));
        raw.push(performance.now() - t0);
        t0 = performance.now();
        await ask(row(guid, i, 'edit'));
        edit.push(performance.now() - t0);
      }
      return { engine, raw, edit };
    } finally {
      worker.terminate();
    }
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

  async storeChanges(n, guids) {
    if (!client) throw new Error('no open client');
    const c = client;
    const store = c.store();
    await until(() => store.getSnapshot().subscriptions.length === n, 60_000);
    // When the store's reads answer: wrapped on the client the store reads from.
    let answered = 0;
    for (const name of ['subscriptions', 'pending', 'failed'] as const) {
      const read = c[name].bind(c) as (...a: unknown[]) => Promise<unknown>;
      (c as unknown as Record<string, unknown>)[name] = (...a: unknown[]) => read(...a).then((v) => ((answered = performance.now()), v));
    }
    const totalMs: number[] = [];
    const readMs: number[] = [];
    for (const guid of guids) {
      await until(async () => (await c.pending()).length === 0 && store.getSnapshot().status.phase === 'idle', 60_000);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const on = !store.getSnapshot().subscriptions.find((s) => s.guid === guid)!.isSubscribed;
      let event = 0;
      const offEvent = c.on('change', (e) => void (e.guids.includes(guid) && !event && (event = performance.now())));
      const shown = new Promise<number>((resolve) => {
        const off = store.subscribe((snap) => {
          if (snap.subscriptions.find((s) => s.guid === guid)?.isSubscribed !== on) return;
          resolve(performance.now());
          queueMicrotask(() => off());
        });
      });
      await c.update(guid, { isSubscribed: on });
      const at = await shown;
      offEvent();
      totalMs.push(at - event);
      readMs.push(answered - event);
    }
    return { totalMs, readMs };
  },

  async mountEpisodeStore(podcast, episodes) {
    if (!client) throw new Error('no open client');
    let seen = 0;
    // What a framework does first with a snapshot: look at it (cheaply).
    client.store({ podcast }).subscribe((snap) => void ((snapshotsSeen += 1), (seen = snap.episodes?.length ?? 0)));
    await until(() => seen === episodes, 60_000);
  },

  async play(ref, seconds) {
    if (!client) throw new Error('no open client');
    const c = client;
    const before = snapshotsSeen;
    let calls = 0;
    await new Promise<void>((resolve, reject) => {
      const timer = setInterval(() => {
        if (calls === seconds) {
          clearInterval(timer);
          resolve();
          return;
        }
        calls++;
        c.setProgress(ref, { position: calls, total: 3600 }).catch((error: unknown) => {
          clearInterval(timer);
          reject(error as Error);
        });
      }, 1000);
    });
    return { calls, snapshots: snapshotsSeen - before };
  },

  async timedImport(kind, input, expected) {
    if (!client) throw new Error('no open client');
    const store = client.store();
    const before = (await client.subscriptions()).length;
    await until(() => store.getSnapshot().ready && store.getSnapshot().subscriptions.length === before, 60_000);
    const want = before + expected;
    let snapshots = 0;
    let after = 0;
    let shownAt = 0;
    // A subscription is handed the snapshot of the moment first: not one the import made.
    const current = store.getSnapshot();
    const off = store.subscribe((snap) => {
      if (snap === current) return;
      if (shownAt) return void after++;
      snapshots++;
      if (snap.subscriptions.length >= want) shownAt = performance.now();
    });
    let eventAt = 0;
    const offChange = client.on('change', (e) => void (!eventAt && e.guids.length >= expected && (eventAt = performance.now())));
    try {
      const t0 = performance.now();
      const report = await (kind === 'importOpml' ? client.importOpml(input as string) : client.addMany(input as string[]));
      const callMs = performance.now() - t0;
      await until(() => shownAt > 0, 60_000);
      await new Promise((resolve) => setTimeout(resolve, 500));
      return { ms: shownAt - t0, callMs, eventMs: eventAt - t0, snapshots, snapshotsAfter: after, added: report.added.length, alreadyThere: report.alreadyThere.length, skipped: report.skipped.length };
    } finally {
      off();
      offChange();
    }
  },

  async loadOpml() {
    if (!client) throw new Error('no open client');
    await client.exportOpml();
  },

  async openBulkBaseline(dbName) {
    bulk = new Worker(new URL('./bulk-put-worker.ts', import.meta.url), { type: 'module', name: 'opa-bench-bulk-put' });
    await askBulk({ type: 'open', dbName });
    // Its first transactions (JIT, the table's first pages): not measured.
    await askBulk({ type: 'put', prefix: 'warm', urls: Array.from({ length: 20 }, (_, i) => `https://warm.example/${i}/feed.xml`) });
  },

  async bulkPutBaseline(prefix, urls, kind = 'put') {
    const t0 = performance.now();
    await askBulk({ type: kind, prefix, urls });
    return performance.now() - t0;
  },

  async closeBulkBaseline() {
    bulk?.terminate();
    bulk = undefined;
  },

  async addsSpread(urls, spanMs) {
    if (!client) throw new Error('no open client');
    const c = client;
    const t0 = performance.now();
    const step = urls.length > 1 ? spanMs / (urls.length - 1) : 0;
    const adds: Promise<unknown>[] = [];
    for (const [i, url] of urls.entries()) {
      const wait = t0 + i * step - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      adds.push(c.add(url));
    }
    await Promise.all(adds);
  },

  async fetches() {
    return [...fetchesSeen];
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
