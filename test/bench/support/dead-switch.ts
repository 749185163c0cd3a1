// A server that can die: a TCP front on 127.0.0.1 that pipes every connection to a reference server while
// alive, and while dead reads each request's first line and cuts the connection without an answer (what a
// browser sees of a crashed host behind nothing: a network error). It counts what the dead server was sent, so
// a figure of "requests against a dead server" is the server's count, not the client's.
import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** One request head the dead server was sent. */
export interface DeadRequest {
  method: string;
  path: string;
  at: number;
}

/** The front and its switch. */
export interface DeadSwitch {
  /** `http://127.0.0.1:PORT` followed by `path` of the upstream URL (what a client is given as its baseUrl). */
  url: string;
  /** Kill the server: open connections are cut, new ones are read and cut. */
  kill(): void;
  revive(): void;
  /** Requests sent while dead (CORS preflights included: a failed one stops the request it stood for). */
  refused(): DeadRequest[];
  close(): Promise<void>;
}

/** Front `upstreamUrl` (an origin, optionally with a path such as `/v1`). */
export async function startDeadSwitch(upstreamUrl: string): Promise<DeadSwitch> {
  const upstream = new URL(upstreamUrl);
  const sockets = new Set<Socket>();
  const refused: DeadRequest[] = [];
  let dead = false;
  const server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    if (dead) {
      let head = '';
      client.on('data', (chunk) => {
        head += chunk.toString('latin1');
        const line = head.split('\r\n', 1)[0]!;
        if (!head.includes('\r\n') && head.length < 8192) return;
        const [method = '?', path = '?'] = line.split(' ');
        refused.push({ method, path, at: Date.now() });
        client.destroy();
      });
      return;
    }
    const up = connect(Number(upstream.port), upstream.hostname);
    sockets.add(up);
    up.on('close', () => sockets.delete(up));
    up.on('error', () => client.destroy());
    client.on('close', () => up.destroy());
    up.on('close', () => client.destroy());
    client.pipe(up);
    up.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const path = upstream.pathname.replace(/\/+$/, '');
  return {
    url: `http://127.0.0.1:${port}${path}`,
    kill() {
      dead = true;
      // Kept-alive connections would otherwise still reach the live server.
      for (const s of sockets) s.destroy();
    },
    revive() {
      dead = false;
    },
    refused: () => [...refused],
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
