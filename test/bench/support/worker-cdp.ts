// CDP commands to a page's dedicated workers over its own session (Target.sendMessageToTarget, not flattened), for
// the bench's profilers and probes.
import type { CDPSession } from 'playwright-core';

/** A command to the worker of `sessionId`; its result (undefined when that worker has ended: no session left). */
export type WorkerSend = (sessionId: string, method: string, params?: object) => Promise<unknown>;

/** Send commands to the workers `cdp` is attached to, and hear their answers. */
export function workerSender(cdp: CDPSession): WorkerSend {
  let nextId = 1;
  const pending = new Map<number, (result: unknown) => void>();
  cdp.on('Target.receivedMessageFromTarget', (e: { message: string }) => {
    const m = JSON.parse(e.message) as { id?: number; result?: unknown };
    if (m.id !== undefined) pending.get(m.id)?.(m.result);
  });
  return (sessionId, method, params = {}) =>
    new Promise<unknown>((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      cdp.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method, params }) }).catch(() => resolve(undefined));
    });
}
