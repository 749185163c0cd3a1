// Peak JS heap of a page's dedicated workers, sampled over the Chrome DevTools Protocol.
//
// Method: a CDP session on the page turns on auto-attach (non-flattened) for its child targets, so every
// dedicated worker the page starts is attached as soon as it exists; each worker's `Runtime.getHeapUsage`
// (V8's used heap, garbage not yet collected included: what counts against a memory limit) is sampled every
// `intervalMs` through `Target.sendMessageToTarget`. Sampling forces no GC and costs the worker microseconds.
import type { CDPSession, Page } from 'playwright-core';

interface Attached {
  sessionId: string;
  type: string;
  name: string;
}

/** Heap samples per worker name. */
export interface HeapReport {
  /** Worker name (the `name` given to `new Worker`) → peak used heap in bytes. */
  peakUsed: Record<string, number>;
  /** Worker name → peak total heap (used + free space V8 holds) in bytes. */
  peakTotal: Record<string, number>;
  samples: number;
}

/** A running sampler: `stop()` ends it and returns the peaks. */
export interface HeapSampler {
  /** Forget the peaks so far (e.g. before the measured part starts). */
  reset(): void;
  /** The peaks since the last `reset()`. */
  snapshot(): HeapReport;
  stop(): Promise<HeapReport>;
}

/** Sample the heap of every dedicated worker `page` has or starts, until `stop()`. */
export async function sampleWorkerHeaps(page: Page, intervalMs = 25): Promise<HeapSampler> {
  const cdp: CDPSession = await page.context().newCDPSession(page);
  const workers = new Map<string, Attached>();
  const pending = new Map<number, (result: { usedSize: number; totalSize: number } | undefined) => void>();
  let nextId = 1;
  let peakUsed: Record<string, number> = {};
  let peakTotal: Record<string, number> = {};
  let samples = 0;

  cdp.on('Target.attachedToTarget', (event: { sessionId: string; targetInfo: { type: string; title: string; url: string } }) => {
    if (event.targetInfo.type !== 'worker') return;
    const worker = { sessionId: event.sessionId, type: event.targetInfo.type, name: event.targetInfo.title || event.targetInfo.url };
    workers.set(event.sessionId, worker);
    // At once: a short-lived worker may be gone before the next round.
    void sample(worker);
  });
  cdp.on('Target.detachedFromTarget', (event: { sessionId: string }) => {
    workers.delete(event.sessionId);
  });
  cdp.on('Target.receivedMessageFromTarget', (event: { sessionId: string; message: string }) => {
    const message = JSON.parse(event.message) as { id?: number; result?: { usedSize: number; totalSize: number } };
    if (message.id === undefined) return;
    const resolve = pending.get(message.id);
    pending.delete(message.id);
    resolve?.(message.result);
  });
  const ask = (sessionId: string): Promise<{ usedSize: number; totalSize: number } | undefined> => {
    const id = nextId++;
    return new Promise((resolve) => {
      pending.set(id, resolve);
      cdp
        .send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method: 'Runtime.getHeapUsage' }) })
        .catch(() => {
          pending.delete(id);
          resolve(undefined);
        });
      // A worker that went away never answers.
      setTimeout(() => {
        if (pending.delete(id)) resolve(undefined);
      }, 1000);
    });
  };

  async function sample(w: Attached): Promise<void> {
    const usage = await ask(w.sessionId);
    if (!usage) return;
    samples++;
    peakUsed[w.name] = Math.max(peakUsed[w.name] ?? 0, usage.usedSize);
    peakTotal[w.name] = Math.max(peakTotal[w.name] ?? 0, usage.totalSize);
  }

  // Attach only now that `sample` can run: workers already there are reported at once.
  await cdp.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: false, flatten: false });

  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await Promise.all([...workers.values()].map(sample));
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();

  return {
    snapshot() {
      return { peakUsed: { ...peakUsed }, peakTotal: { ...peakTotal }, samples };
    },
    reset() {
      peakUsed = {};
      peakTotal = {};
      samples = 0;
    },
    async stop() {
      stopped = true;
      await loop;
      await cdp.detach().catch(() => undefined);
      return { peakUsed, peakTotal, samples };
    },
  };
}
