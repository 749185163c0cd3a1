// The docs' recipes as an app runs them: the offline-boot app (test/browser/pages/offline-boot/) built for
// production, its service worker taken verbatim from docs/service-worker.md ("Booting offline") and built
// after the app with the list of built files (the guide's "Listing the built files"), all served by Vite's
// `vite preview` server, with the guide's `preview.proxy` when given (docs/servers.md).
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, preview, type PreviewServer } from 'vite';
import { codeBlocks } from '../../node/docs/markdown.ts';
import { readFileSync } from 'node:fs';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const appDir = fileURLToPath(new URL('../pages/offline-boot/', import.meta.url));

/** The guide's service worker for an offline boot: the first ts block under its "Booting offline" heading. */
export function guideServiceWorker(): string {
  const text = readFileSync(join(repo, 'docs/service-worker.md'), 'utf8');
  const from = text.indexOf('\n## Booting offline');
  const block = codeBlocks('docs/service-worker.md', text.slice(from)).find((b) => b.lang === 'ts');
  if (from < 0 || !block) throw new Error('docs/service-worker.md has no service worker under "## Booting offline"');
  return block.code;
}

/** An app served by `vite preview`: `stop()` takes its origin off the network, `close()` also removes the build. */
export interface PreviewApp {
  /** `http://127.0.0.1:PORT/` */
  url: string;
  /** The built files the service worker caches. */
  files: string[];
  stop(): Promise<void>;
  close(): Promise<void>;
}

/** Every file under `dir`, as root-relative URL paths: the guide's way of listing the build. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => `/${relative(dir, join(e.parentPath, e.name)).split('\\').join('/')}`);
}

/** Build the app and `sw.js` from `serviceWorker` (the guide's by default), serve them with `vite preview`. */
export async function startPreviewApp(options: { proxy?: Record<string, string>; serviceWorker?: string } = {}): Promise<PreviewApp> {
  const work = await mkdtemp(join(tmpdir(), 'opa-recipes-app-'));
  const outDir = join(work, 'dist');
  const common = { configFile: false as const, logLevel: 'warn' as const, clearScreen: false, cacheDir: join(repo, 'node_modules/.vite-recipes-app') };
  // The library from source: `opa-sync` and `opa-sync/sw` are this repository's entries.
  const alias = { 'opa-sync/sw': join(repo, 'worker/sw.ts'), 'opa-sync': join(repo, 'src/index.ts') };
  await build({
    ...common,
    root: appDir,
    base: '/',
    resolve: { alias },
    worker: { format: 'es', rolldownOptions: { output: { entryFileNames: 'assets/opa-sync-worker-[hash].js' } } },
    build: { outDir, emptyOutDir: true, target: 'es2022', minify: true, reportCompressedSize: false, modulePreload: false },
  });
  const files = ['/', ...(await filesUnder(outDir))];
  const swSource = join(work, 'sw.ts');
  await writeFile(swSource, options.serviceWorker ?? guideServiceWorker());
  await build({
    ...common,
    root: work,
    resolve: { alias },
    define: { SHELL_FILES: JSON.stringify(files) },
    build: {
      outDir, emptyOutDir: false, target: 'es2022', minify: true, reportCompressedSize: false,
      lib: { entry: swSource, formats: ['es'], fileName: () => 'sw.js' },
      rolldownOptions: { output: { codeSplitting: false } },
    },
  });
  const server: PreviewServer = await preview({
    ...common,
    root: work,
    build: { outDir },
    preview: { host: '127.0.0.1', port: 0, strictPort: false, proxy: options.proxy ?? {} },
  });
  const url = server.resolvedUrls?.local[0];
  if (!url) throw new Error('vite preview did not say where it listens');
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await server.close();
  };
  return {
    url,
    files,
    stop,
    async close() {
      await stop();
      await rm(work, { recursive: true, force: true });
    },
  };
}
