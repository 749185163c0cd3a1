// `npm run bench -- --leaving [--browser=chromium|firefox|webkit|all] [--runs=N] [--delay=MS]`: closes of a tab right after a
// throttled setProgress (or MS later), and how soon the position is on the server (the reference gPodder server's arrival time
// minus the moment the close was asked), per engine: same origin (the page's Vite proxy) and cross origin (the
// server's own CORS, so every request has a preflight). Prints p50/p95 and the share of closes delivered.
import { startGpodderServer } from '../server/gpodder/server.ts';
import { launchBrowser } from '../support/browsers.ts';
import { parseEngines, type EngineName } from '../support/engines.ts';
import { waitFor } from '../support/wait.ts';
import { pageUrl, ready, startPages } from '../browser/support/harness.ts';
import { percentile } from './support/stats.ts';

const DEVICE = 'bench-leaving';
/** A close not delivered by then counts as not delivered (the next open would send it). */
const GIVE_UP_MS = 5000;

/** One engine and origin: latencies of the delivered closes, and how many closes there were. */
interface LeavingFigures {
  engine: EngineName;
  origin: 'same' | 'cross';
  runs: number;
  delivered: number;
  /** Closes not delivered whose CORS preflight did reach the server (the request itself never followed). */
  preflightOnly: number;
  p50?: number;
  p95?: number;
}

async function measure(engine: EngineName, runs: number, delay: number): Promise<LeavingFigures[]> {
  const server = await startGpodderServer({ port: 0, dialect: 'mygpo' });
  const pages = await startPages({ '/api/2': server.url });
  const browser = await launchBrowser(engine);
  server.registerDevice(DEVICE);
  const podcast = 'https://feeds.example/bench/leaving.xml';
  server.foreign.add([podcast], { device: DEVICE });
  const out: LeavingFigures[] = [];
  try {
    for (const origin of ['same', 'cross'] as const) {
      const context = await browser.newContext();
      // Closing a context's last tab ends WebKit's session: a blank tab keeps it.
      await context.newPage();
      const latencies: number[] = [];
      let preflightOnly = 0;
      for (let i = 0; i < runs; i++) {
        const episode = `https://media.example/bench/${engine}-${origin}-${i}-${Date.now()}.mp3`;
        const baseUrl = origin === 'same' ? new URL(pages.url).origin : server.url;
        const options = { protocol: 'gpodder' as const, baseUrl, auth: { type: 'basic' as const, username: 'alice', password: 'alice-password' }, device: DEVICE, dbName: `bench-leaving-${engine}-${origin}-${i}-${Date.now()}`, pullInterval: 0 };
        const page = await context.newPage();
        await page.goto(pageUrl(pages.url, options));
        await ready(page);
        await page.evaluate(async ([podcast, episode]) => {
          const ref = { podcast, episode };
          await window.opa.client.sync();
          await window.opa.client.setProgress(ref, { position: 5, total: 1800 });
          await window.opa.client.sync();
          await window.opa.client.setProgress(ref, { position: 42 });
        }, [podcast, episode] as const);
        if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
        const asked = Date.now();
        await page.close();
        const arrived = await waitFor('the position', () => server.log().find((e) => e.method === 'POST' && /episodes/.test(e.path) && JSON.stringify(e.body).includes(episode) && JSON.stringify(e.body).includes('"position":42')), GIVE_UP_MS, 10).catch(() => undefined);
        if (arrived) latencies.push(arrived.at - asked);
        else if (server.log().some((e) => e.method === 'OPTIONS' && /episodes/.test(e.path) && e.at >= asked)) preflightOnly++;
      }
      await context.close();
      const figures: LeavingFigures = { engine, origin, runs, delivered: latencies.length, preflightOnly };
      if (latencies.length) Object.assign(figures, { p50: percentile(latencies, 50), p95: percentile(latencies, 95) });
      out.push(figures);
    }
  } finally {
    await browser.close();
    await pages.close();
    await server.close();
  }
  return out;
}

/** Run the leaving bench with the command line's `--browser` and `--runs`; prints a table, exits. */
export async function runLeavingBench(argv: string[]): Promise<void> {
  let engines: EngineName[] = ['chromium'];
  let runs = 20;
  let delay = 0;
  for (const arg of argv) {
    const [name, value] = arg.split('=', 2) as [string, string | undefined];
    if (name === '--browser' && value) engines = parseEngines(value);
    else if (name === '--runs' && value) runs = Number(value);
    else if (name === '--delay' && value) delay = Number(value);
  }
  const rows: LeavingFigures[] = [];
  for (const engine of engines) rows.push(...(await measure(engine, runs, delay)));
  console.log('| engine | origin | closes delivered | close → on server p50 | p95 | misses with only the preflight arrived |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.engine} | ${r.origin} | ${r.delivered}/${r.runs} | ${r.p50 ?? '—'} ms | ${r.p95 ?? '—'} ms | ${r.origin === 'cross' ? r.preflightOnly : '—'} |`);
  process.exit(0);
}
