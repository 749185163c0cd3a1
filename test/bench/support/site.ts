// The bench pages, built for production with Vite's JS API (minified, the real module worker bundled from
// src/ and worker/ as an app's build would), served from a temp dir by a static server on 127.0.0.1.
// Pages are opened as http://bench.localhost:PORT/: Chromium resolves *.localhost to loopback, and Dexie's
// slow debug mode (on for localhost/127.0.0.1 pages) stays off.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const pagesDir = fileURLToPath(new URL('../pages/', import.meta.url));

/** The host name pages are opened on (loopback, but not one Dexie treats as debug). */
export const BENCH_HOST = 'bench.localhost';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

// Cross-origin isolated pages get the engines' fine clock (Firefox rounds performance.now() to 1 ms otherwise,
// coarser than one raw IndexedDB write, so the raw baseline's percentiles could be 0 ms).
const ISOLATED = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };

/** A built, served bench site. */
export interface BenchSite {
  /** `http://bench.localhost:PORT/` */
  url: string;
  /** Where the build went. */
  dir: string;
  close(): Promise<void>;
}

/** Build test/bench/pages (page + baseline worker + the engine's worker) into a temp dir. */
export async function buildPages(outDir: string): Promise<void> {
  await build({
    configFile: false,
    root: pagesDir,
    logLevel: 'warn',
    clearScreen: false,
    base: './',
    cacheDir: join(repo, 'node_modules/.vite-bench'),
    worker: { format: 'es' },
    build: {
      outDir,
      emptyOutDir: true,
      target: 'es2022',
      // Unminified for test/bench/profile.ts, whose profiles then name the functions.
      minify: process.env.BENCH_MINIFY !== '0',
      sourcemap: false,
      reportCompressedSize: false,
      modulePreload: false,
      // The bench page, and the two cold-open pages (test/bench/cold-open.ts).
      rollupOptions: { input: ['index.html', 'open.html', 'raw-open.html'].map((page) => join(pagesDir, page)) },
    },
  });
}

/** Build the pages and serve them on 127.0.0.1 (only); stop with `close()`. */
export async function startSite(): Promise<BenchSite> {
  const dir = await mkdtemp(join(tmpdir(), 'opa-bench-site-'));
  await buildPages(dir);
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    const file = normalize(join(dir, path === '/' ? 'index.html' : path));
    if (!file.startsWith(dir + sep)) {
      res.writeHead(403).end();
      return;
    }
    readFile(file).then(
      (body) => {
        // Built files have a content hash in their names: cached as an app's host would (a cold open reads the worker from cache).
        const cache = path.startsWith('/assets/') ? 'max-age=31536000, immutable' : 'no-store';
        res.writeHead(200, { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream', 'Cache-Control': cache, ...ISOLATED });
        res.end(body);
      },
      () => res.writeHead(404).end('not found'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${BENCH_HOST}:${port}/`,
    dir,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await rm(dir, { recursive: true, force: true });
    },
  };
}
