// One build for the four framework apps (React, Svelte, Vue, Solid), each rendering `client.store()`; the
// browser test (test/browser/frameworks.test.ts) builds it and serves the output. `opa-sync` is this repo's src.
import { fileURLToPath } from 'node:url';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import react from '@vitejs/plugin-react';
import vue from '@vitejs/plugin-vue';
import { defineConfig } from 'vite';
import solid from 'vite-plugin-solid';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/** The apps, by name: each is `<name>/index.html`. */
export const FRAMEWORKS = ['react', 'svelte', 'vue', 'solid'] as const;

export default defineConfig({
  root: here('./'),
  base: './',
  logLevel: 'warn',
  // React and Solid both write JSX: each plugin takes its own app's files.
  plugins: [react({ include: /\/react\/.*\.jsx$/ }), solid({ include: /\/solid\/.*\.jsx$/ }), svelte(), vue()],
  resolve: { alias: { 'opa-sync': here('../../src/index.ts') } },
  worker: { format: 'es' },
  build: {
    outDir: here('../../node_modules/.frameworks-dist'),
    emptyOutDir: true,
    target: 'es2022',
    rolldownOptions: {
      input: Object.fromEntries(FRAMEWORKS.map((name) => [name, here(`./${name}/index.html`)])),
      checks: { pluginTimings: false },
    },
  },
});
