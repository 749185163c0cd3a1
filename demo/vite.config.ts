// Vite config of the demo page: served from demo/, importing the library straight from ../src and ../worker.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const demoDir = fileURLToPath(new URL('.', import.meta.url));
const repoDir = fileURLToPath(new URL('..', import.meta.url));

export default defineConfig({
  root: demoDir,
  // Its own optimizer cache: other dev servers of this repo (tests, benchmarks) must not rebuild it under us.
  cacheDir: fileURLToPath(new URL('../node_modules/.vite-demo', import.meta.url)),
  // The page and the worker import the library's sources, which live above the demo's root.
  server: { host: '127.0.0.1', fs: { allow: [repoDir] } },
  // Bundle these up front: a dependency discovered late makes Vite reload the page mid-demo.
  optimizeDeps: { include: ['comlink', 'dexie', 'idb-keyval'] },
  worker: { format: 'es' },
  clearScreen: false,
});
