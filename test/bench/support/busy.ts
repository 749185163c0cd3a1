// Busy time per second of a page's main thread and of its dedicated workers, from a Chromium trace.
//
// Method: Chrome's tracing over CDP (`Tracing.start` on the page's session, category `toplevel`) records every
// task each thread of the page's renderer process runs (`ThreadControllerImpl::RunTask`, with its start and
// duration). A thread's busy time in a second is the union of its tasks' intervals within that second: all
// the work of the thread (script, GC on the thread, IndexedDB calls, structured cloning, style, layout),
// none of its idle waiting. Threads are told apart by their names: `CrRendererMain` (the page) and
// `DedicatedWorker thread` (workers). Tracing costs each task a few microseconds.
import type { CDPSession, Page } from 'playwright-core';

interface TraceEvent {
  name: string;
  ph: string;
  pid: number;
  tid: number;
  ts: number;
  dur?: number;
  args?: { name?: string };
}

/** Busy ms in each whole second of the traced window, per thread kind. */
export interface BusyTrace {
  main: number[];
  /** Every dedicated worker of the page's process, summed. */
  worker: number[];
  /** Worker threads found in the page's process. */
  workers: number;
}

/** A running trace of `page`'s renderer process: `stop()` ends it and returns the busy time per second. */
export async function traceBusy(page: Page): Promise<{ stop(): Promise<BusyTrace> }> {
  const cdp: CDPSession = await page.context().newCDPSession(page);
  await cdp.send('Tracing.start', { transferMode: 'ReturnAsStream', traceConfig: { includedCategories: ['toplevel', '__metadata'], recordMode: 'recordContinuously' } });
  return {
    async stop() {
      const complete = new Promise<string>((resolve) => cdp.once('Tracing.tracingComplete', (e: { stream?: string }) => resolve(e.stream!)));
      await cdp.send('Tracing.end');
      const stream = await complete;
      let text = '';
      for (;;) {
        const chunk = await cdp.send('IO.read', { handle: stream, size: 1 << 20 });
        text += chunk.base64Encoded ? Buffer.from(chunk.data, 'base64').toString('utf8') : chunk.data;
        if (chunk.eof) break;
      }
      await cdp.send('IO.close', { handle: stream });
      await cdp.detach();
      const parsed = JSON.parse(text) as TraceEvent[] | { traceEvents: TraceEvent[] };
      return busyPerSecond(Array.isArray(parsed) ? parsed : parsed.traceEvents);
    },
  };
}

/** The union length of `intervals` ([start, end] in µs) within each second from `t0`, in ms, for `seconds` seconds. */
function perSecond(intervals: [number, number][], t0: number, seconds: number): number[] {
  const out = new Array<number>(seconds).fill(0);
  let covered = -Infinity;
  for (const [start, end] of intervals.sort((a, b) => a[0] - b[0])) {
    // Nested and overlapping tasks (a nested run loop) count once.
    let from = Math.max(start, covered);
    if (end <= from) continue;
    covered = end;
    while (from < end) {
      const bucket = Math.floor((from - t0) / 1e6);
      const bucketEnd = t0 + (bucket + 1) * 1e6;
      const to = Math.min(end, bucketEnd);
      if (bucket >= 0 && bucket < seconds) out[bucket]! += (to - from) / 1000;
      from = to;
    }
  }
  return out;
}

/** Busy time per whole second, from the first task of the page's main thread to the last one. */
export function busyPerSecond(events: TraceEvent[]): BusyTrace {
  const names = new Map<string, string>();
  for (const e of events) if (e.ph === 'M' && e.name === 'thread_name' && e.args?.name) names.set(`${e.pid}:${e.tid}`, e.args.name);
  const tasks = events.filter((e) => e.ph === 'X' && e.name === 'ThreadControllerImpl::RunTask' && e.dur !== undefined);
  const threadOf = (e: TraceEvent) => names.get(`${e.pid}:${e.tid}`) ?? '';
  // The page's process: the renderer whose main thread has workers beside it (the bench page's, traced alone).
  const pids = new Set(tasks.filter((e) => threadOf(e).startsWith('DedicatedWorker')).map((e) => e.pid));
  const main = tasks.filter((e) => threadOf(e) === 'CrRendererMain' && pids.has(e.pid));
  if (!main.length) throw new Error('bench: the trace has no main-thread task of a renderer with a dedicated worker');
  const pid = main[0]!.pid;
  const workerTids = new Set(tasks.filter((e) => e.pid === pid && threadOf(e).startsWith('DedicatedWorker')).map((e) => e.tid));
  const t0 = Math.min(...main.map((e) => e.ts));
  const t1 = Math.max(...main.map((e) => e.ts + e.dur!));
  const seconds = Math.floor((t1 - t0) / 1e6);
  const spans = (list: TraceEvent[]) => list.map((e): [number, number] => [e.ts, e.ts + e.dur!]);
  const mainBusy = perSecond(spans(main.filter((e) => e.pid === pid)), t0, seconds);
  const workerBusy = new Array<number>(seconds).fill(0);
  for (const tid of workerTids) {
    perSecond(spans(tasks.filter((e) => e.pid === pid && e.tid === tid)), t0, seconds).forEach((ms, i) => (workerBusy[i]! += ms));
  }
  return { main: mainBusy, worker: workerBusy, workers: workerTids.size };
}
