// `npx tsx test/bench/trace-open.ts [runs]`: where a cold open's time goes (Chromium). Fills a database with 300
// subscriptions as the bench does, then traces `runs` opens of the library's page (after one unmeasured open that
// fills the HTTP cache) and prints when the page created its client, when the worker had evaluated its script,
// and when the rows were rendered, with each stretch's CPU time per thread (TRACE_OUT=PREFIX keeps the traces).
import { startServer } from '../server/server.ts';
import { playwrightPage } from '../support/drivers/chromium.ts';
import { call, launchBenchBrowser } from './support/browser.ts';
import { endTrace } from './support/busy.ts';
import { startSite } from './support/site.ts';

interface TraceEvent { name: string; cat: string; ph: string; pid: number; tid: number; ts: number; dur?: number; tdur?: number; args?: { name?: string; data?: { url?: string; resourceType?: string } } }

const runs = Number(process.argv[2] ?? 3);
const site = await startSite();
const browser = await launchBenchBrowser('chromium', site.url);
const server = await startServer({ port: 0, seed: 300 });
try {
  const page = await browser.openPage();
  const a = { baseUrl: server.url, token: 'demo-token', dbName: `trace-open-${Date.now()}`, pageSize: 500 };
  await call(page, 'open', a);
  await call(page, 'sync');
  await call(page, 'close');
  const options = { baseUrl: a.baseUrl, auth: { type: 'bearer', token: a.token }, dbName: a.dbName, pageSize: a.pageSize, pullInterval: 0 };
  const url = `${browser.site}open.html?options=${encodeURIComponent(JSON.stringify(options))}`;
  const tab = await browser.context.newPage();
  const pw = playwrightPage(tab)!;
  const open = async () => {
    await tab.goto(url);
    for (let i = 0; i < 600 && !(await tab.evaluate(() => window.opened ?? null)); i++) await new Promise((r) => setTimeout(r, 50));
    const opened = await tab.evaluate(() => ({ ...window.opened!, nav: performance.timeOrigin }));
    await tab.goto('about:blank');
    return opened;
  };
  await open();
  for (let run = 0; run < runs; run++) {
    const cdp = await pw.context().newCDPSession(pw);
    await cdp.send('Tracing.start', { transferMode: 'ReturnAsStream', traceConfig: { includedCategories: ['toplevel', 'devtools.timeline', 'v8', 'blink', 'loading', 'navigation', '__metadata'], recordMode: 'recordContinuously' } });
    const opened = await open();
    const text = await endTrace(cdp);
    const parsed = JSON.parse(text) as TraceEvent[] | { traceEvents: TraceEvent[] };
    const events = Array.isArray(parsed) ? parsed : parsed.traceEvents;
    if (process.env.TRACE_OUT) await import('node:fs/promises').then((fs) => fs.writeFile(`${process.env.TRACE_OUT}.${run}.json`, text));
    const names = new Map<string, string>();
    for (const e of events) if (e.ph === 'M' && e.name === 'thread_name' && e.args?.name) names.set(`${e.pid}:${e.tid}`, e.args.name);
    const thread = (e: TraceEvent) => names.get(`${e.pid}:${e.tid}`) ?? '';
    const onWorker = (e: TraceEvent) => thread(e).startsWith('DedicatedWorker');
    const onPage = (e: TraceEvent) => thread(e) === 'CrRendererMain';
    // The page's renderer: the one with a dedicated worker. Times from its request for the document (after the
    // navigation start the page's own figures count from: the old page's unload, the request's start).
    const pid = events.find((e) => e.ph === 'X' && onWorker(e))!.pid;
    const mine = events.filter((e) => e.pid === pid);
    const nav = mine.find((e) => e.name === 'ResourceSendRequest' && e.args?.data?.resourceType === 'Document')!.ts;
    const script = (e: TraceEvent, name: string) => e.name === 'FunctionCall' && (e.args?.data?.url ?? '').includes(name);
    const client = mine.find((e) => onPage(e) && script(e, '/client-') && e.ts > nav)!.ts;
    const workerFirst = Math.min(...mine.filter((e) => e.ph === 'X' && onWorker(e) && e.ts > nav).map((e) => e.ts));
    const evaluated = Math.max(...mine.filter((e) => onWorker(e) && e.name === 'v8.evaluateModule').map((e) => e.ts + e.dur!));
    // The rows: the page's own script called back after the worker's start (the `ready` snapshot rendered).
    const rendered = mine.find((e) => onPage(e) && script(e, '/open-') && e.ts > evaluated)!.ts;
    const within = (from: number, to: number, keep: (e: TraceEvent) => boolean) => mine.filter((e) => keep(e) && e.ts >= from && e.ts < to);
    const cpu = (list: TraceEvent[]) => (list.reduce((t, e) => t + (e.tdur ?? 0), 0) / 1000).toFixed(1);
    const task = (e: TraceEvent) => e.ph === 'X' && e.name === 'ThreadControllerImpl::RunTask';
    const rel = (ts: number) => ((ts - nav) / 1000).toFixed(0);
    const count = (name: string) => within(evaluated, rendered, (e) => onWorker(e) && e.name === name).length;
    console.log(`run ${run + 1}: rows at ${opened.ms.toFixed(0)} ms from navigation start (ready snapshot ${opened.readyMs?.toFixed(0)} ms); from the document's request:`);
    console.log(`  client created ${rel(client)} ms; worker's first task ${rel(workerFirst)} ms; its script evaluated ${rel(evaluated)} ms (${rel(evaluated - client + nav)} ms after the client); rows rendered ${rel(rendered)} ms`);
    console.log(`  worker boot (client → script evaluated): worker CPU ${cpu(within(client, evaluated, (e) => task(e) && onWorker(e)))} ms; compile ${mine.filter((e) => onWorker(e) && e.name === 'v8.compileModule').map((e) => `${(e.dur! / 1000).toFixed(0)} ms wall, ${((e.tdur ?? 0) / 1000).toFixed(0)} ms CPU`).join(', ')}`);
    console.log(`  engine start (script evaluated → rows): ${rel(rendered - evaluated + nav)} ms; worker CPU ${cpu(within(evaluated, rendered, (e) => task(e) && onWorker(e)))} ms, page CPU ${cpu(within(evaluated, rendered, (e) => task(e) && onPage(e)))} ms; in the worker ${count('Receive mojo reply')} IndexedDB (mojo) replies, ${count('SerializedScriptValueFactory::deserialize')} clones read, ${count('HandlePostMessage')} messages handled`);
  }
  await tab.close();
  await call(page, 'deleteDb', a.dbName, 30_000).catch(() => false);
} finally {
  await browser.close();
  await server.close();
  await site.close();
}
