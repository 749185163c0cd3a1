import type { Plugin } from 'vite';
import { defineConfig } from 'vitest/config';

/**
 * The worker bundle takes Dexie's modern ES build: its package entry is a wrapper over the UMD build (which
 * exists to share one Dexie between ESM and CJS users on a page), and the worker has no other users.
 */
function dexieModernEsm(): Plugin {
  return {
    name: 'opa-sync:dexie-modern-esm',
    enforce: 'pre',
    resolveId(id, importer) {
      return id === 'dexie' ? this.resolve('dexie/dist/modern/dexie.min.mjs', importer, { skipSelf: true }) : null;
    },
  };
}

// One config: the library build (three entries plus the worker bundle) and the test projects.
export default defineConfig({
  // Relative base: the emitted worker URL stays relative to the module, so apps that bundle us work.
  base: './',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    minify: true,
    lib: {
      entry: { index: 'src/index.ts', worker: 'worker/index.ts', sw: 'worker/sw.ts' },
      formats: ['es'],
    },
    rolldownOptions: {
      // The page entry and engine entry keep their deps external; the worker bundle carries its own.
      external: ['dexie', 'comlink'],
      // The page entry may export more than its own names: the code both entries share (errors, their transfer
      // over comlink, the auth header) lives in it, and the engine entry imports it from there. A page then
      // loads one file and the schema chunk, not three (each gzipped file costs its own header and dictionary).
      preserveEntrySignatures: 'allow-extension',
      output: {
        minify: { codegen: true },
        topLevelVar: false,
        codeSplitting: {
          // The Dexie schema in a chunk of its own, apart from the errors both entries share: with
          // "sideEffects": false an app that never calls openSyncDatabase leaves Dexie out of its page bundle.
          // The rest both entries share goes into the page entry (see preserveEntrySignatures).
          groups: [
            { name: 'schema', test: /[\\/]src[\\/]schema\.ts$/ },
            { name: 'index', test: /[\\/]src[\\/](index|errors|transfer|auth-header)\.ts$/ },
          ],
        },
      },
    },
  },
  worker: {
    // A module worker (the client spawns it with type: 'module'), self-contained: its own Dexie and comlink.
    format: 'es',
    plugins: () => [dexieModernEsm()],
    rolldownOptions: {
      output: {
        entryFileNames: 'assets/opa-sync-worker-[hash].js',
        chunkFileNames: 'assets/opa-sync-worker-[name]-[hash].js',
        // A finished bundle no one minifies again: its `@__PURE__` marks only cost bytes. Licence notices stay.
        comments: { legal: true, annotation: false, jsdoc: false },
      },
    },
  },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'node',
          include: ['test/node/**/*.test.ts'],
          setupFiles: ['test/node/setup.ts'],
          environment: 'node',
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'browser',
          include: ['test/browser/**/*.test.ts'],
          environment: 'node',
          testTimeout: 120_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
