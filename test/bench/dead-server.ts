// A dead server and a burst of edits (issue 31): `adds` new feeds added from the page, spread evenly over
// `spanMs`, while the server is dead (every connection cut before an answer: a network error), the client given
// a long backoff. The engine's requests meanwhile (its worker counts its fetches), and what the dead server was
// sent (test/bench/support/dead-switch.ts): a request per edit is load the backoff was meant to spare it. Open
// Podcast API and gPodder (mygpo).
import { randomUUID } from 'node:crypto';
import { startGpodderServer } from '../server/gpodder/server.ts';
import { startServer } from '../server/server.ts';
import type { PullArgs } from './pages/api.ts';
import { call, type BenchBrowser } from './support/browser.ts';
import { startDeadSwitch, type DeadRequest } from './support/dead-switch.ts';
import { median } from './support/stats.ts';

/** What the dead-server section runs. */
export interface DeadPlan {
  adds: number;
  spanMs: number;
  /** How long the dead server is watched after the last add resolved (the backoff is far longer). */
  windowMs: number;
  runs: number;
  /** The client's backoff (`retry`): first and longest delay. */
  backoffMs: number;
}

export const FULL_DEAD: DeadPlan = { adds: 40, spanMs: 500, windowMs: 5_000, runs: 3, backoffMs: 60_000 };
/** The smoke run's: the same burst, one run, a short watch. */
export const QUICK_DEAD: DeadPlan = { adds: 40, spanMs: 500, windowMs: 1_000, runs: 1, backoffMs: 60_000 };

/** One protocol's figures: medians of the runs, and the range. */
export interface DeadProtocolFigures {
  runs: number;
  /** The engine's requests (its fetches) while the server was dead. */
  requests: number;
  min: number;
  max: number;
  /** Of them, by method (medians). */
  byMethod: Record<string, number>;
  /**
   * What the dead server was sent: the engine's requests as the browser sent them (a CORS preflight each, which
   * fails and stops the request behind it; Firefox tries a reset connection 10 times).
   */
  serverSaw: number;
  /** Changes still queued after the watch (every add: nothing lost). */
  pending: number;
  /** Each run's engine requests: method, path, ms after the server died. */
  trace: string[][];
}

/** The dead-server section's figures (`deadServer` in the JSON). */
export interface DeadFigures {
  adds: number;
  spanMs: number;
  windowMs: number;
  backoffMs: number;
  opa: DeadProtocolFigures;
  gpodder: DeadProtocolFigures;
  method: string;
}

const USER = 'alice';
const PASSWORD = 'alice-password';
const DEVICE = 'bench-dead';
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function figures(runs: DeadRequest[][], serverSaw: number[], pending: number[]): DeadProtocolFigures {
  const counts = runs.map((r) => r.length);
  const methods = [...new Set(runs.flat().map((r) => r.method))].sort();
  return {
    runs: runs.length,
    requests: median(counts),
    min: Math.min(...counts),
    max: Math.max(...counts),
    byMethod: Object.fromEntries(methods.map((m) => [m, median(runs.map((r) => r.filter((x) => x.method === m).length))])),
    serverSaw: median(serverSaw),
    pending: Math.min(...pending),
    trace: runs.map((r) => r.map((x) => `${x.method} ${x.path} +${x.at} ms`)),
  };
}

/** Run the dead-server section in one engine. */
export async function deadServerBench(browser: BenchBrowser, plan: DeadPlan, log: (l: string) => void): Promise<DeadFigures> {
  const page = await browser.openPage();
  const out: Partial<Record<'opa' | 'gpodder', DeadProtocolFigures>> = {};
  try {
    for (const protocol of ['opa', 'gpodder'] as const) {
      const seen: DeadRequest[][] = [];
      const serverSaw: number[] = [];
      const pending: number[] = [];
      for (let run = 0; run < plan.runs; run++) {
        const label = `${protocol}-${run}-${randomUUID().slice(0, 8)}`;
        const device = `${DEVICE}-${run}`;
        const server =
          protocol === 'opa'
            ? await startServer({ port: 0, seed: 20 })
            : await startGpodderServer({ port: 0, dialect: 'mygpo', users: { [USER]: PASSWORD } });
        if ('registerDevice' in server) {
          server.registerDevice(device);
          server.seed(20, { device });
        }
        const front = await startDeadSwitch(server.url);
        const args: PullArgs = {
          baseUrl: front.url,
          token: protocol === 'opa' ? 'demo-token' : PASSWORD,
          dbName: `opa-bench-dead-${label}`,
          pageSize: 500,
          ...(protocol === 'gpodder' ? { gpodder: { username: USER, device } } : {}),
        };
        try {
          await call(page, 'open', args, { retry: { baseDelay: plan.backoffMs, maxDelay: plan.backoffMs }, countFetches: true });
          await call(page, 'sync');
          await sleep(200);
          front.kill();
          const killedAt = Date.now();
          const urls = Array.from({ length: plan.adds }, (_, i) => `https://feeds.example/dead/${label}/show-${i}.xml`);
          await call(page, 'addsSpread', urls, plan.spanMs);
          await sleep(plan.windowMs);
          const refused = front.refused();
          const made = (await call(page, 'fetches')).filter((f) => f.at >= killedAt).map((f) => ({ method: f.method, path: new URL(f.url).pathname, at: f.at - killedAt }));
          const queued = await call(page, 'pendingCount');
          if (queued < plan.adds) throw new Error(`bench: ${plan.adds - queued} of ${plan.adds} adds are no longer queued against a dead server`);
          // Each side's count checks the other's: the engine's fetches reach the dead server (as preflights at least).
          if (made.length && !refused.length) throw new Error('bench: the engine made requests the dead server never saw');
          if (refused.length && !made.length) throw new Error("bench: the dead server was sent requests the engine's fetch count missed");
          seen.push(made);
          serverSaw.push(refused.length);
          pending.push(queued);
          const by = [...new Set(made.map((r) => r.method))].map((m) => `${made.filter((r) => r.method === m).length} ${m}`).join(', ');
          log(`  dead server, ${protocol} (run ${run + 1}/${plan.runs}): ${plan.adds} adds over ${plan.spanMs} ms → ${made.length} requests in ${((plan.spanMs + plan.windowMs) / 1000).toFixed(1)} s (${by || 'none'}); the dead server saw ${refused.length}; ${queued} queued`);
          await call(page, 'close');
          await call(page, 'deleteDb', args.dbName, 30_000);
        } finally {
          await front.close();
          await server.close();
        }
      }
      out[protocol] = figures(seen, serverSaw, pending);
    }
  } finally {
    await page.close();
  }
  return {
    adds: plan.adds,
    spanMs: plan.spanMs,
    windowMs: plan.windowMs,
    backoffMs: plan.backoffMs,
    opa: out.opa!,
    gpodder: out.gpodder!,
    method:
      'the client synced, then its server killed (a TCP front that cuts every connection once the request line arrived), the adds made from the page evenly over spanMs without waiting for each other, with retry { baseDelay, maxDelay } = backoffMs; requests: the fetches the engine made (its worker counts them) until windowMs after the last add resolved; serverSaw: the request lines the dead server got meanwhile',
  };
}
