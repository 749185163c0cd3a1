// `npx tsx test/bench/profile.ts [N] [--baseline] [--episodes] [--import]`: a V8 CPU profile of the engine's (or the baseline's) worker during one initial pull of N
// subscriptions (default 10,000) in Chromium (`--episodes`: a first sync of N episode states from a mygpo account, as the bench's;
// `--import`: a sync of 100 and then `addMany` of N feeds shown by the page's store, pushes held back), summed by function (self time), to see where a pull's worker time
// goes. CPU time, not wall time: unlike the bench's figures, it hardly moves with the machine's load.
import { startServer } from '../server/server.ts';
import { accountWithHistory, args as episodeArgs } from './episodes.ts';
import { playwrightPage } from '../support/drivers/chromium.ts';
import { call, launchBenchBrowser } from './support/browser.ts';
import { startSite } from './support/site.ts';
import { workerSender } from './support/worker-cdp.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

process.env.BENCH_MINIFY = '0';
const baseline = process.argv.includes('--baseline');
const episodes = process.argv.includes('--episodes');
const importing = process.argv.includes('--import');
const n = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 10_000);
const site = await startSite();
const browser = await launchBenchBrowser('chromium', site.url);
const account = episodes ? await accountWithHistory(n, 100) : undefined;
const server = account ?? (await startServer({ port: 0, seed: importing ? 100 : n }));
try {
  const page = await browser.openPage();
  const pw = playwrightPage(page)!;
  const cdp = await pw.context().newCDPSession(pw);
  const send = workerSender(cdp);
  const profiled: string[] = [];
  cdp.on('Target.attachedToTarget', (e: { sessionId: string; targetInfo: { type: string } }) => {
    if (e.targetInfo.type !== 'worker') return;
    void (async () => {
      await send(e.sessionId, 'Profiler.enable');
      await send(e.sessionId, 'Profiler.setSamplingInterval', { interval: 100 });
      await send(e.sessionId, 'Profiler.start');
      profiled.push(e.sessionId);
      await send(e.sessionId, 'Runtime.runIfWaitingForDebugger');
    })();
  });
  await cdp.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: true, flatten: false });
  const args = account ? episodeArgs(account, 'profile') : { baseUrl: server.url, token: 'demo-token', dbName: `profile-${Date.now()}`, pageSize: 500 };
  // Profiled from the worker's first instruction to the end of the pull, before the worker goes.
  const t0 = Date.now();
  if (baseline && episodes) throw new Error('--baseline --episodes: not profiled (the episodes baseline worker does not wait to be held)');
  if (baseline) await call(page, 'baselinePull', { ...args, hold: true });
  else if (importing) {
    await call(page, 'open', args, { pushDelay: 600_000 });
    await call(page, 'sync');
    const r = await call(page, 'timedImport', 'addMany', Array.from({ length: n }, (_, i) => `https://feeds.example/profile/${i}.xml`), n);
    console.log(`addMany of ${n}: change event at ${r.eventMs.toFixed(0)} ms, in the store at ${r.ms.toFixed(0)} ms, the call resolved at ${r.callMs.toFixed(0)} ms`);
  } else {
    await call(page, 'open', args);
    await call(page, 'sync');
  }
  console.log(`${importing ? 'sync and import' : 'pull'}: ${Date.now() - t0} ms`);
  const profiles = (await Promise.all(profiled.map((s) => send(s, 'Profiler.stop')))) as { profile: Profile }[];
  await call(page, baseline ? 'releaseBaseline' : 'close');
  for (const p of profiles) {
    if (!p?.profile) continue;
    const self = new Map<string, number>();
    const byId = new Map(p.profile.nodes.map((node) => [node.id, node]));
    let total = 0;
    p.profile.samples.forEach((id, i) => {
      const node = byId.get(id)!;
      const f = node.callFrame;
      const key = `${f.functionName || '(anon)'} ${f.url.replace(/.*\//, '')}:${f.lineNumber}`;
      const dt = p.profile.timeDeltas[i] ?? 0;
      total += dt;
      self.set(key, (self.get(key) ?? 0) + dt);
    });
    const idle = self.get('(idle) :-1') ?? 0;
    console.log(`worker: ${(total / 1000).toFixed(0)} ms sampled, ${(idle / 1000).toFixed(0)} ms idle, ${((total - idle) / 1000).toFixed(0)} ms busy`);
    for (const [key, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TOP ?? 40))) console.log(`${(us / 1000).toFixed(1).padStart(8)} ms  ${key}`);
  }
} finally {
  await browser.close();
  await server.close();
  await site.close();
}
