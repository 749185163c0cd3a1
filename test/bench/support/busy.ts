// Busy time per second of a page's main thread and of its dedicated workers, from a Chromium trace.
//
// Method: Chrome's tracing over CDP (`Tracing.start` on the page's session, category `toplevel`) records every
// task each thread of the page's renderer process runs (`ThreadControllerImpl::RunTask`, with its start and
// duration, and the CPU time the thread spent in it). A thread's busy time in a second is the CPU time of its
// tasks within that second: all the work of the thread (script, GC on the thread, IndexedDB calls, structured
// cloning, style, layout), none of its idle waiting, nor (unlike the tasks' wall time, reported beside) the
// time the OS ran another process on the core, which a loaded machine adds. Threads are told apart by their names: `CrRendererMain` (the page) and
// `DedicatedWorker thread` (workers). Tracing costs each task a few microseconds.
import type { CDPSession, Page } from 'playwright-core';

interface TraceEvent {
  name: string;
  ph: string;
  pid: number;
  tid: number;
  ts: number;
  dur?: number;
  /** The thread's CPU time in the event (µs). */
  tdur?: number;
  args?: { name?: string };
}

/** Busy ms in each whole second of the traced window, per thread kind: CPU time (wall time where the trace has none). */
export interface BusyTrace {
  main: number[];
  /** Every dedicated worker of the page's process, summed. */
  worker: number[];
  /** The same as wall time: the tasks' spans (longer than the CPU time when the core was taken away). */
  mainWall: number[];
  workerWall: number[];
  /** Whether the trace had the threads' CPU time. */
  cpuTime: boolean;
  /** Worker threads found in the page's process. */
  workers: number;
}

/** End the trace `cdp` started (`Tracing.start` with `ReturnAsStream`) and return its JSON text; the session is detached. */
export async function endTrace(cdp: CDPSession): Promise<string> {
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
  return text;
}

/** A running trace of `page`'s renderer process: `stop()` ends it and returns the busy time per second. */
export async function traceBusy(page: Page): Promise<{ stop(): Promise<BusyTrace> }> {
  const cdp: CDPSession = await page.context().newCDPSession(page);
  await cdp.send('Tracing.start', { transferMode: 'ReturnAsStream', traceConfig: { includedCategories: ['toplevel', '__metadata'], recordMode: 'recordContinuously' } });
  return {
    async stop() {
      const text = await endTrace(cdp);
      // BENCH_TRACE_OUT=FILE keeps the raw trace (open it in Perfetto) to see which tasks the busy time is.
      if (process.env.BENCH_TRACE_OUT) await import('node:fs/promises').then((fs) => fs.writeFile(process.env.BENCH_TRACE_OUT!, text));
      const parsed = JSON.parse(text) as TraceEvent[] | { traceEvents: TraceEvent[] };
      return busyPerSecond(Array.isArray(parsed) ? parsed : parsed.traceEvents);
    },
  };
}

/** A task: its wall-clock span (µs) and the CPU time its thread spent in it (µs). */
type Span = { start: number; end: number; cpu: number };

/**
 * Per second from `t0`, for `seconds` seconds: the wall time the tasks covered and the CPU time they took (ms),
 * each task's share of a second in proportion to its wall span in it. A task nested in another one (a nested
 * run loop) is the outer one's time, counted once.
 */
function perSecond(spans: Span[], t0: number, seconds: number): { wall: number[]; cpu: number[] } {
  const wall = new Array<number>(seconds).fill(0);
  const cpu = new Array<number>(seconds).fill(0);
  let covered = -Infinity;
  for (const span of spans.sort((a, b) => a.start - b.start)) {
    if (span.end <= covered) continue;
    let from = Math.max(span.start, covered);
    covered = span.end;
    const ratio = span.end > span.start ? span.cpu / (span.end - span.start) : 0;
    while (from < span.end) {
      const bucket = Math.floor((from - t0) / 1e6);
      const to = Math.min(span.end, t0 + (bucket + 1) * 1e6);
      if (bucket >= 0 && bucket < seconds) {
        wall[bucket]! += (to - from) / 1000;
        cpu[bucket]! += ((to - from) * ratio) / 1000;
      }
      from = to;
    }
  }
  return { wall, cpu };
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
  // CPU time where the trace has it (`tdur`, thread time): on a loaded machine a task's wall time also counts
  // the time the OS gave the core to another process.
  const spans = (list: TraceEvent[]) => list.map((e): Span => ({ start: e.ts, end: e.ts + e.dur!, cpu: e.tdur ?? e.dur! }));
  const mainBusy = perSecond(spans(main.filter((e) => e.pid === pid)), t0, seconds);
  const workerBusy = { wall: new Array<number>(seconds).fill(0), cpu: new Array<number>(seconds).fill(0) };
  for (const tid of workerTids) {
    const one = perSecond(spans(tasks.filter((e) => e.pid === pid && e.tid === tid)), t0, seconds);
    one.wall.forEach((ms, i) => (workerBusy.wall[i]! += ms));
    one.cpu.forEach((ms, i) => (workerBusy.cpu[i]! += ms));
  }
  return { main: mainBusy.cpu, worker: workerBusy.cpu, mainWall: mainBusy.wall, workerWall: workerBusy.wall, workers: workerTids.size, cpuTime: tasks.some((e) => e.tdur !== undefined) };
}
