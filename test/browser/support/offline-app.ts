// The app an offline reload must boot (test/browser/pages/offline-boot/): built for production as an app's build
// would (the library's module worker one of its assets), and its service worker built after it with the list
// of built files injected (as Workbox's injectManifest does), served from a temp dir on 127.0.0.1.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import type { BrowserContext, BrowserPage } from '../../support/browsers.ts';
import type { PageOptions } from './page-api.ts';
import { serveStatic } from './static.ts';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const appDir = fileURLToPath(new URL('../pages/offline-boot/', import.meta.url));

/** The built app, served: `stop()` takes its origin off the network (nothing answers), `close()` also removes the build. */
export interface OfflineApp {
  /** `http://127.0.0.1:PORT/` */
  url: string;
  /** The files the service worker caches (`/`, `/index.html`, every built asset). */
  files: string[];
  /** Paths the server answered. */
  hits: string[];
  stop(): Promise<void>;
  close(): Promise<void>;
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => `/${relative(dir, join(e.parentPath, e.name)).split('\\').join('/')}`);
}

/** Build the app and its service worker (`/sw.js`), serve them. */
export async function startOfflineApp(): Promise<OfflineApp> {
  const outDir = await mkdtemp(join(tmpdir(), 'opa-offline-app-'));
  const common = { configFile: false as const, logLevel: 'warn' as const, clearScreen: false, cacheDir: join(repo, 'node_modules/.vite-offline-app') };
  await build({
    ...common,
    root: appDir,
    base: '/',
    resolve: { alias: { 'opa-sync': join(repo, 'src/index.ts') } },
    // The library's worker file named as the library's own build names it, so the service worker can leave it out.
    worker: { format: 'es', rolldownOptions: { output: { entryFileNames: 'assets/opa-sync-worker-[hash].js' } } },
    build: { outDir, emptyOutDir: true, target: 'es2022', minify: true, reportCompressedSize: false, modulePreload: false },
  });
  const files = ['/', ...(await filesUnder(outDir))];
  await build({
    ...common,
    root: appDir,
    define: { __SHELL_FILES__: JSON.stringify(files) },
    build: {
      outDir, emptyOutDir: false, target: 'es2022', minify: true, reportCompressedSize: false,
      lib: { entry: join(appDir, 'sw.ts'), formats: ['es'], fileName: () => 'sw.js' },
      rolldownOptions: { output: { codeSplitting: false } },
    },
  });
  const site = await serveStatic(outDir);
  return {
    url: `${site.origin}/`,
    files,
    hits: site.hits,
    stop: () => site.close(),
    async close() {
      await site.close();
      await rm(outDir, { recursive: true, force: true });
    },
  };
}

/** Open the app with `options`, install its service worker (`/sw.js` + `query`) and wait until it controls the page. */
export async function openInstalled(context: BrowserContext, app: OfflineApp, options: PageOptions, query = ''): Promise<BrowserPage> {
  const page = await context.newPage();
  await page.goto(`${app.url}index.html?options=${encodeURIComponent(JSON.stringify(options))}`);
  await page.evaluate(async (url) => {
    await navigator.serviceWorker.register(url, { type: 'module', scope: '/' });
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) await new Promise((resolve) => navigator.serviceWorker.addEventListener('controllerchange', resolve, { once: true }));
  }, `/sw.js${query}`);
  return page;
}
