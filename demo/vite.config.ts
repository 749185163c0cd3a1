// Vite config of the demo page: served from demo/, importing the library straight from ../src and ../worker.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const demoDir = fileURLToPath(new URL('.', import.meta.url));
const repoDir = fileURLToPath(new URL('..', import.meta.url));

export default defineConfig({
  root: demoDir,
  // The page and the worker import the library's sources, which live above the demo's root.
  server: { host: '127.0.0.1', fs: { allow: [repoDir] } },
  // Bundle these up front: a dependency discovered late makes Vite reload the page mid-demo.
  optimizeDeps: { include: ['comlink', 'dexie', 'idb-keyval'] },
  worker: { format: 'es' },
  clearScreen: false,
});
