// `npx tsx test/bench/probe.ts update|store|play|pull [N] [--push-delay=MS] [--profile] [--busy]`: where one call's
// time goes, step by step, in Chromium (issue 27's misses; the README's Benchmarks say what each run found).
// Every thread of the page (the page, the engine's worker, the raw-write worker) is instrumented before its
// first instruction (CDP, the worker held at start): each message posted and received (comlink calls and answers
// by id, the event sink's calls by event name), each IndexedDB transaction created and completed (stores,
// mode), each fetch; times on one clock (`performance.timeOrigin + now()`). Then, per call of the bench:
// - update: N `update()`s on a synced store of 10,000 (default 200), each followed by a raw write round trip,
//   as `--only=incremental`; each call split into steps (the edit's transaction, the last-chance copy...);
// - store: N edits (default 30) shown by a store of 10,000 subscriptions, as `--only=scale`'s large store;
// - play: N seconds (default 20) of `setProgress` with a 3,000-episode feed's store mounted, as the playback;
//   `--busy`: no instrumentation, the busy time per second from a Chrome trace, as the bench's;
// - pull: three incremental pulls right after a 10,000-row import, each request's `since` against the entries.
// `--push-delay=MS` sets the client's; `--profile` adds a V8 CPU profile of the engine's worker (inclusive and self
// time by function; `PROFILE_OUT=FILE` saves it as JSON); `MARKS=FILE`
// saves the marks, `--marks=FILE` analyses saved ones. It prints the median of each step's time and one call's
// whole timeline. Wall times: compare steps with each other and with the raw round trip of the same run.
import { readFileSync, writeFileSync } from 'node:fs';
import { startServer } from '../server/server.ts';
import { playwrightPage } from '../support/drivers/chromium.ts';
import { accountWithHistory, args as gpodderArgs, feedUrl, mediaUrl } from './episodes.ts';
import { call, launchBenchBrowser } from './support/browser.ts';
import { startSite } from './support/site.ts';
import { workerSender } from './support/worker-cdp.ts';
import { traceBusy } from './support/busy.ts';
import { percentile } from './support/stats.ts';

type Mark = [at: number, what: string];
/** A mark with its thread: P the page, W the engine's worker, R the raw-write worker. */
type Ev = [at: number, what: string, thread: string];
/** Every thread's marks, in time order. */
let marksAll: Ev[] = [];

// Runs in each thread before its own code (a string: it is evaluated there, not bundled here).
const INSTRUMENT = `(() => {
  if (globalThis.__marks) return;
  const T = (globalThis.__marks = []);
  const mark = (s) => T.push([performance.timeOrigin + performance.now(), s]);
  const arg = (w) => (w && w.type === 'RAW' && typeof w.value === 'string' ? ' ' + w.value : '');
  const desc = (d) => {
    if (!d || typeof d !== 'object') return String(d).slice(0, 20);
    if (d.type === 'APPLY') return 'call ' + (d.path || []).join('.') + (d.path && d.path.length ? '' : arg((d.argumentList || [])[0])) + ' #' + d.id;
    if (d.id !== undefined && (d.type === 'RAW' || d.type === 'HANDLER')) return 'answer #' + d.id;
    if (d.type) return 'msg ' + d.type + (d.id !== undefined ? ' #' + d.id : '');
    return 'msg';
  };
  // A worker's global has its postMessage on itself ([Global]), the others on their prototype.
  for (const o of [globalThis.MessagePort && MessagePort.prototype, globalThis.Worker && Worker.prototype, globalThis.WorkerGlobalScope && globalThis]) {
    if (!o || !o.postMessage) continue;
    const post = o.postMessage;
    o.postMessage = function (d, ...rest) { mark('out ' + desc(d)); return post.call(this, d, ...rest); };
  }
  const wrapped = new WeakMap();
  const add = EventTarget.prototype.addEventListener;
  const remove = EventTarget.prototype.removeEventListener;
  EventTarget.prototype.addEventListener = function (type, fn, ...rest) {
    if (type !== 'message' || typeof fn !== 'function') return add.call(this, type, fn, ...rest);
    let w = wrapped.get(fn);
    if (!w) wrapped.set(fn, (w = function (e) { mark('in ' + desc(e.data)); return fn.call(this, e); }));
    return add.call(this, type, w, ...rest);
  };
  EventTarget.prototype.removeEventListener = function (type, fn, ...rest) { return remove.call(this, type, wrapped.get(fn) || fn, ...rest); };
  for (const C of [globalThis.Worker, globalThis.DedicatedWorkerGlobalScope]) {
    const d = C && Object.getOwnPropertyDescriptor(C.prototype, 'onmessage');
    if (d && d.set) Object.defineProperty(C.prototype, 'onmessage', { ...d, set(fn) { d.set.call(this, fn && function (e) { mark('in ' + desc(e.data)); return fn.call(this, e); }); } });
  }
  if (globalThis.IDBDatabase) {
    let n = 0;
    const tx = IDBDatabase.prototype.transaction;
    IDBDatabase.prototype.transaction = function (names, mode, ...rest) {
      const t = tx.call(this, names, mode, ...rest);
      const label = '#' + ++n + ' ' + [].concat(names).join(',') + ' ' + (mode || 'readonly');
      mark('tx+ ' + label);
      t.addEventListener('complete', () => mark('tx= ' + label));
      t.addEventListener('abort', () => mark('tx! ' + label));
      return t;
    };
  }
  if (globalThis.fetch) {
    const f = globalThis.fetch;
    globalThis.fetch = function (input, init) {
      const what = (init && init.method || 'GET') + ' ' + String(input && input.url || input).replace(/^https?:[/][/][^/]+/, '').slice(0, 60);
      mark('fetch+ ' + what);
      return f.call(this, input, init).finally(() => mark('fetch= ' + what));
    };
  }
})()`;

process.env.BENCH_MINIFY = '0';
// `--marks=FILE`: analyse the marks a run saved (MARKS=FILE) instead of running.
const saved = process.argv.find((a) => a.startsWith('--marks='))?.split('=')[1];
const mode = process.argv[2] ?? 'update';
if (!['update', 'store', 'play', 'pull'].includes(mode)) throw new Error('usage: probe.ts update|store|play|pull [N] [--push-delay=MS] [--profile] [--busy] [--marks=FILE]');
const n = Number(process.argv.slice(3).find((a) => /^\d+$/.test(a)) ?? (mode === 'update' ? 200 : mode === 'store' ? 30 : 20));
/** `--push-delay=MS`: the client's pushDelay (a long one: no push runs beside the calls). */
const profile = process.argv.includes('--profile');
/** `--busy` (play): no instrumentation; the busy time per second from a Chrome trace, as the bench's `--only=scale`. */
const busy = process.argv.includes('--busy');
const pushDelay = process.argv.find((a) => a.startsWith('--push-delay='))?.split('=')[1];
if (saved) {
  marksAll = JSON.parse(readFileSync(saved, 'utf8')) as Ev[];
  report(marksAll);
  process.exit(0);
}
const site = await startSite();
const browser = await launchBenchBrowser('chromium', site.url);
const server = mode === 'play' ? await accountWithHistory(3_000, 1) : await startServer({ port: 0, seed: 10_000 });
try {
  const page = await browser.openPage();
  const pw = playwrightPage(page)!;
  const cdp = await pw.context().newCDPSession(pw);
  const send = workerSender(cdp);
  const workers: { session: string; label: string }[] = [];
  cdp.on('Target.attachedToTarget', (e: { sessionId: string; targetInfo: { type: string; url: string } }) => {
    if (e.targetInfo.type !== 'worker') return;
    const label = e.targetInfo.url.includes('raw-write') ? 'R' : e.targetInfo.url.includes('baseline') ? 'B' : 'W';
    workers.push({ session: e.sessionId, label });
    void (async () => {
      if (!busy) await send(e.sessionId, 'Runtime.evaluate', { expression: INSTRUMENT });
      if (profile && label === 'W') {
        await send(e.sessionId, 'Profiler.enable');
        await send(e.sessionId, 'Profiler.setSamplingInterval', { interval: 200 });
      }
      await send(e.sessionId, 'Runtime.runIfWaitingForDebugger');
    })();
  });
  await cdp.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: true, flatten: false });
  if (!busy) await pw.evaluate(INSTRUMENT);
  const args = mode === 'play' ? gpodderArgs(server as Awaited<ReturnType<typeof accountWithHistory>>, 'probe') : { baseUrl: server.url, token: 'demo-token', dbName: `probe-${Date.now()}`, pageSize: 500 };
  await call(page, 'open', args, pushDelay !== undefined ? { pushDelay: Number(pushDelay) } : mode === 'store' ? { pushDelay: 20 } : {});
  await call(page, 'sync');
  const state = mode === 'play' ? [] : (server as Awaited<ReturnType<typeof startServer>>).state();
  if (mode === 'pull') {
    // An incremental pull right after the import (as `--only=incremental`'s noChangeAfterBulk): its list requests, and how many entries lie after each \`since\`.
    const ref = server as Awaited<ReturnType<typeof startServer>>;
    for (let rep = 0; rep < 3; rep++) {
      ref.clearLog();
      await call(page, 'sync');
      for (const e of ref.log().filter((x) => x.method === 'GET' && x.path === '/v1/subscriptions')) {
        const since = e.query.since;
        const after = since ? state.filter((s) => (s.subscription_changed ?? '') >= since).length : state.length;
        console.log(`sync ${rep + 1}: GET since=${since} page=${e.query.page} per_page=${e.query.per_page}: ${after} entries changed at or after since; newest ${state.map((s) => s.subscription_changed).sort().at(-1)}`);
      }
    }
    await call(page, 'close');
    await Promise.all([browser.close(), server.close(), site.close()]);
    process.exit(0);
  }
  const engineWorkers = workers.filter((w) => w.label === 'W');
  if (profile) await Promise.all(engineWorkers.map((w) => send(w.session, 'Profiler.start')));
  const t0 = Date.now();
  if (mode === 'update') {
    const plan = state.slice(-n).map((e) => ({ guid: e.guid, change: { isSubscribed: !e.is_subscribed } }));
    await call(page, 'updatesWithRaw', plan, `${args.dbName}-raw`);
  } else if (mode === 'store') {
    const r = await call(page, 'storeChanges', 10_000, state.slice(0, n).map((e) => e.guid));
    console.log(`store: total p50 ${percentile(r.totalMs, 50).toFixed(1)} p95 ${percentile(r.totalMs, 95).toFixed(1)}; reads p50 ${percentile(r.readMs, 50).toFixed(1)} p95 ${percentile(r.readMs, 95).toFixed(1)}`);
  } else {
    await call(page, 'mountEpisodeStore', feedUrl(0), 3_000);
    const trace = busy ? await traceBusy(pw) : undefined;
    await call(page, 'play', { podcast: feedUrl(0), episode: mediaUrl(0, 0) }, n);
    if (trace) {
      const b = await trace.stop();
      const f = (xs: number[]) => `p50 ${percentile(xs, 50).toFixed(2)} / p95 ${percentile(xs, 95).toFixed(2)} / mean ${(xs.reduce((a, c) => a + c, 0) / xs.length).toFixed(2)} ms`;
      console.log(`busy per second over ${b.main.length} s: main ${f(b.main)}; worker ${f(b.worker)}`);
      await call(page, 'close');
      await Promise.all([browser.close(), server.close(), site.close()]);
      process.exit(0);
    }
  }
  if (profile) for (const w of engineWorkers) printProfile(((await send(w.session, 'Profiler.stop')) as { profile?: Profile } | undefined)?.profile);
  const since = performance.timeOrigin + (t0 - Date.now()) + performance.now();
  const marks: Ev[] = [];
  const take = (label: string, list: Mark[]) => list.forEach(([at, what]) => at >= since - 5_000 && marks.push([at, what, label]));
  take('P', (await pw.evaluate('globalThis.__marks')) as Mark[]);
  for (const w of workers) {
    const r = (await send(w.session, 'Runtime.evaluate', { expression: 'globalThis.__marks', returnByValue: true })) as { result?: { value?: Mark[] } };
    take(w.label, r?.result?.value ?? []);
  }
  marks.sort((a, b) => a[0] - b[0]);
  marksAll = marks;
  if (process.env.MARKS) writeFileSync(process.env.MARKS, JSON.stringify(marks));
  await call(page, 'close');
  report(marks);
} finally {
  await browser.close();
  await server.close();
  await site.close();
}

/** Per call of the page (`call update`, `call setProgress`...): its window to its answer, each step's median. */
function report(marks: Ev[]) {
  const method = mode === 'play' ? 'setProgress' : 'update';
  const windows: { start: number; end: number; events: Ev[] }[] = [];
  for (const [i, [at, what, label]] of marks.entries()) {
    const m = label === 'P' && new RegExp(`^out call ${method} #(\\S+)`).exec(what);
    if (!m) continue;
    const end = marks.slice(i).find(([, w, l]) => l === 'P' && w === `in answer #${m[1]}`);
    if (!end) continue;
    windows.push({ start: at, end: end[0], events: marks.filter(([t]) => t >= at && t <= end[0]) });
  }
  const durations = windows.map((w) => w.end - w.start);
  // The page's handler of each event the worker sends (its sink call → its answer posted): the page's own time per event.
  const handlers = new Map<string, number[]>();
  for (const [i, [at, what, label]] of marks.entries()) {
    const m = label === 'P' && /^in call {1,2}(\S+) #(\S+)/.exec(what);
    if (!m) continue;
    const end = marks.slice(i, i + 200).find(([, w, l]) => l === 'P' && w === `out answer #${m[2]}`);
    if (end) (handlers.get(m[1]!) ?? handlers.set(m[1]!, []).get(m[1]!)!).push(end[0] - at);
  }
  for (const [event, xs] of handlers) console.log(`page handles '${event}' (${xs.length}): p50 ${percentile(xs, 50).toFixed(2)} ms, p95 ${percentile(xs, 95).toFixed(2)} ms, sum ${xs.reduce((a, b) => a + b, 0).toFixed(0)} ms`);
  console.log(`${windows.length} ${method}() calls: p50 ${percentile(durations, 50).toFixed(2)} ms, p95 ${percentile(durations, 95).toFixed(2)} ms`);
  // Each step: the time from the call to the first event of that name (its ordinal within the call, tx numbers dropped).
  const steps = new Map<string, number[]>();
  const counts = new Map<string, number[]>();
  for (const w of windows) {
    const seen = new Map<string, number>();
    for (const [at, what, label] of w.events) {
      const key = `${label} ${what.replace(/#\S+ ?/g, '')}`.trim();
      const k = (seen.get(key) ?? 0) + 1;
      seen.set(key, k);
      const name = `${key} [${k}]`;
      (steps.get(name) ?? steps.set(name, []).get(name)!).push(at - w.start);
    }
    for (const [key, k] of seen) (counts.get(key) ?? counts.set(key, []).get(key)!).push(k);
  }
  console.log('\nstep (thread event [nth in the call]): in how many calls, ms from the call p50 / p95');
  const rows = [...steps].filter(([, xs]) => xs.length >= windows.length / 4).sort((a, b) => percentile(a[1], 50) - percentile(b[1], 50));
  for (const [name, xs] of rows) console.log(`${percentile(xs, 50).toFixed(2).padStart(8)} ${percentile(xs, 95).toFixed(2).padStart(8)}  ${String(xs.length).padStart(4)}  ${name}`);
  console.log('\nevents per call (median, max):');
  for (const [key, ks] of [...counts].sort()) console.log(`  ${key}: ${percentile(ks, 50)}, ${Math.max(...ks)}`);
  const median = windows[durations.indexOf([...durations].sort((a, b) => a - b)[Math.floor(durations.length / 2)]!)]!;
  console.log(`\none call at the median (${(median.end - median.start).toFixed(2)} ms):`);
  for (const [at, what, label] of marks.filter(([t]) => t >= median.start - 1 && t <= median.end + 40)) console.log(`${(at - median.start).toFixed(2).padStart(8)}  ${label} ${what}`);
  attribute(windows);
  if (mode === 'update') {
    // The raw write round trip after each update, the same way.
    const raw: number[] = [];
    for (const [i, [at, what, label]] of marks.entries()) {
      if (label !== 'P' || what !== 'out msg row') continue;
      const end = marks.slice(i).find(([, w, l]) => l === 'P' && w.startsWith('in ') && !w.includes('#'));
      if (end) raw.push(end[0] - at);
    }
    console.log(`\nraw write round trips: ${raw.length}, p50 ${percentile(raw, 50).toFixed(2)} ms, p95 ${percentile(raw, 95).toFixed(2)} ms`);
  }
}

/**
 * One call's time split into steps, from what its window holds (the engine's worker `W`, the page `P`): the call
 * reaching the worker; the edit's own transaction (which builds the last-chance copy too) waiting for transactions
 * created before it, and running; its commit to the copy posted to the page; the rest to the answer on the page.
 * Medians and p95 over the calls.
 */
function attribute(windows: { start: number; end: number; events: Ev[] }[]) {
  const parts = new Map<string, number[]>();
  const put = (k: string, v: number) => (parts.get(k) ?? parts.set(k, []).get(k)!).push(v);
  for (const w of windows) {
    const ev = w.events;
    const inCall = ev.find(([, what, l]) => l === 'W' && /^in call (update|setProgress)/.test(what));
    const own = ev.find(([t, what, l]) => l === 'W' && inCall && t >= inCall[0] && /^tx\+ .* readwrite$/.test(what));
    if (!inCall || !own) continue;
    const id = own[1].split(' ')[1];
    const done = ev.find(([, what, l]) => l === 'W' && what.startsWith(`tx= ${id} `));
    if (!done) continue;
    // Transactions of this worker created before the edit's and still running then: it starts after them.
    const earlier = marksAll.filter(([t, what, l]) => l === 'W' && t < own[0] && what.startsWith('tx+ '));
    let blockedUntil = own[0];
    for (const [, what] of earlier) {
      const tid = what.split(' ')[1];
      const end = marksAll.find(([t, x, l]) => l === 'W' && x.startsWith(`tx= ${tid} `) && t >= own[0]);
      if (end && end[0] > blockedUntil) blockedUntil = Math.min(end[0], done[0]);
    }
    // The copy goes on the answers' own channel, a plain message posted after the commit, before the answer.
    const lcOut = ev.find(([t, what, l]) => l === 'W' && t >= done[0] && what === 'out msg');
    const wOut = [...ev].reverse().find(([, what, l]) => l === 'W' && what.startsWith('out answer #'));
    const reads = ev.filter(([t, what, l]) => l === 'W' && t > done[0] && /^tx\+ .* readonly$/.test(what)).length;
    const pushing = ev.some(([, what, l]) => l === 'W' && (what.startsWith('fetch') || (/readwrite$/.test(what) && what.startsWith('tx+ ') && what !== own[1])));
    put('1 page → worker (the call delivered)', inCall[0] - w.start);
    put('2 the edit\'s transaction waits for earlier ones (a push\'s, a copy\'s)', blockedUntil - own[0]);
    put('3 the edit\'s transaction runs to its commit', done[0] - blockedUntil);
    put('4 commit → the copy posted to the page (0: none posted)', lcOut ? lcOut[0] - done[0] : 0);
    put('5 then → the worker answers the call', wOut ? wOut[0] - (lcOut ? lcOut[0] : done[0]) : NaN);
    put('6 the answer delivered to the page', wOut ? w.end - wOut[0] : NaN);
    put('  read-only transactions begun after the commit, in the call', reads);
    put('  calls with a push (fetch or ack write) inside (1 = yes)', pushing ? 1 : 0);
  }
  console.log('\nper call, attributed (p50 / p95 / mean, ms):');
  for (const [k, xs] of [...parts].sort()) {
    const ok = xs.filter((x) => !Number.isNaN(x));
    console.log(`  ${k}: ${percentile(ok, 50).toFixed(2)} / ${percentile(ok, 95).toFixed(2)} / ${(ok.reduce((a, b) => a + b, 0) / ok.length).toFixed(2)}  (${ok.length} calls)`);
  }
}

interface Profile {
  nodes: { id: number; callFrame: { functionName: string; lineNumber: number }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

/** The worker's CPU profile over the calls: busy time, and the functions with the most inclusive time (each counted once per sample). */
function printProfile(p: Profile | undefined) {
  if (!p) return;
  if (process.env.PROFILE_OUT) writeFileSync(process.env.PROFILE_OUT, JSON.stringify(p));
  const parent = new Map<number, number>();
  for (const node of p.nodes) for (const c of node.children ?? []) parent.set(c, node.id);
  const byId = new Map(p.nodes.map((node) => [node.id, node]));
  const incl = new Map<string, number>();
  const self = new Map<string, number>();
  let total = 0;
  let idle = 0;
  p.samples.forEach((id, i) => {
    const dt = (p.timeDeltas[i] ?? 0) / 1000;
    total += dt;
    if (byId.get(id)!.callFrame.functionName === '(idle)') return void (idle += dt);
    const own = byId.get(id)!.callFrame;
    const ownName = `${own.functionName || '(anon)'}:${own.lineNumber}`;
    self.set(ownName, (self.get(ownName) ?? 0) + dt);
    const names = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const f = byId.get(at)!.callFrame;
      names.add(`${f.functionName || '(anon)'}:${f.lineNumber}`);
    }
    for (const name of names) incl.set(name, (incl.get(name) ?? 0) + dt);
  });
  console.log(`\nengine worker CPU profile: ${total.toFixed(0)} ms sampled, ${(total - idle).toFixed(0)} ms busy; inclusive ms by function:`);
  for (const [name, ms] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TOP ?? 45))) console.log(`${ms.toFixed(1).padStart(8)}  ${name}`);
  console.log('self ms by function:');
  for (const [name, ms] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TOP ?? 45))) console.log(`${ms.toFixed(1).padStart(8)}  ${name}`);
}
