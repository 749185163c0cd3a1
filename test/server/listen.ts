import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { send } from './http.ts';
import type { ServerTime } from './types.ts';

/** A listening HTTP server reduced to what the reference servers need. */
export interface Listening {
  readonly port: number;
  /** Stop listening and drop every socket. */
  close(): Promise<void>;
}

/** Serve `handle` on 127.0.0.1:`port` (0 picks one); a handler that throws answers 500. */
export async function listen(
  port: number,
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  name: string,
): Promise<Listening> {
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      console.error(`${name}: handler failed`, err);
      if (!res.headersSent) send(req, res, 500, JSON.stringify({ code: 500, message: 'Internal server error' }));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The wall clock and the platform's timers. */
export const wallTime: ServerTime = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Sleeps that `cancelAll` can stop (they then never resolve: the server is closing). */
export function createSleeper(timers: Pick<ServerTime, 'setTimeout' | 'clearTimeout'>): { sleep(ms: number): Promise<void>; cancelAll(): void } {
  const pending = new Set<unknown>();
  return {
    sleep: (ms) =>
      new Promise((resolve) => {
        const handle = timers.setTimeout(() => {
          pending.delete(handle);
          resolve();
        }, ms);
        pending.add(handle);
      }),
    cancelAll() {
      for (const handle of pending) timers.clearTimeout(handle);
      pending.clear();
    },
  };
}
