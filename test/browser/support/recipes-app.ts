// The docs' recipes as an app runs them, from the package as an app installs it: a scratch app (the offline-boot
// page, test/browser/pages/offline-boot/) whose node_modules/opa-sync is this package built as `npm pack` ships
// it; `vite build` with no configuration (the README's promise); its service worker taken verbatim from
// docs/service-worker.md ("Booting offline") and built by that guide's own script ("Listing the built files");
// all served by `vite preview`, with the `vite.config.ts` of docs/servers.md (its proxy) when given. The same app,
// unbuilt, is also served by Vite's dev server with that `vite.config.ts` (`npm run dev`, what a developer runs first).
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build, createServer, preview, type PreviewServer } from 'vite';
import { codeBlocks } from '../../node/docs/markdown.ts';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../../../', import.meta.url));
const page = fileURLToPath(new URL('../pages/offline-boot/', import.meta.url));
// Inside the repository (git-ignored /tmp/): the guide's build script imports `vite`, resolved from here.
const scratch = join(repo, 'tmp/recipes');

/** The first ts block of a guide (`file`, as `text`) under the heading `heading` (## or ###). */
function guideBlock(heading: string, text: string, file = 'docs/service-worker.md'): string {
  const from = text.search(new RegExp(`\\n#{2,3} ${heading.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\n`));
  const block = from < 0 ? undefined : codeBlocks(file, text.slice(from)).find((b) => b.lang === 'ts');
  if (!block) throw new Error(`${file} has no ts block under "${heading}"`);
  return block.code;
}

/** docs/servers.md's `vite.config.ts` for the same-origin proxy, word for word but where the server listens. */
export async function guideProxyConfig(server: string): Promise<string> {
  const config = guideBlock('The same-origin proxy opodsync needs', await readFile(join(repo, 'docs/servers.md'), 'utf8'), 'docs/servers.md');
  const listens = "'http://127.0.0.1:8080'";
  if (!config.includes(listens)) throw new Error(`docs/servers.md's proxy config no longer says ${listens}`);
  return config.replace(listens, JSON.stringify(new URL(server).origin));
}

/** The guide's service worker for an offline boot. */
export async function guideServiceWorker(): Promise<string> {
  return guideBlock('Booting offline', await readFile(join(repo, 'docs/service-worker.md'), 'utf8'));
}

let packaged: Promise<string> | undefined;

/** This package as `npm pack` ships it (package.json and the library build), once per test file. */
function packageCopy(): Promise<string> {
  packaged ??= (async () => {
    const dir = join(scratch, 'package');
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    await run(process.execPath, [join(repo, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'error', '--outDir', join(dir, 'dist')], { cwd: repo });
    await copyFile(join(repo, 'package.json'), join(dir, 'package.json'));
    return dir;
  })();
  return packaged;
}

/** Write the app's `vite.config.ts`; returns its path. */
async function writeConfig(app: string, config: string): Promise<string> {
  const file = join(app, 'vite.config.ts');
  await writeFile(file, config);
  return file;
}

/** A scratch app being served: `close()` stops its server and removes it. */
export interface ServedApp {
  /** `http://127.0.0.1:PORT/` */
  url: string;
  close(): Promise<void>;
}

/** An app served by `vite preview`: `stop()` takes its origin off the network, `close()` also removes it. */
export interface PreviewApp extends ServedApp {
  /** The built files the service worker caches, as its build listed them. */
  files: string[];
  stop(): Promise<void>;
}

/** A fresh app directory: the offline-boot page, and this package installed in its node_modules. */
async function scratchApp(): Promise<string> {
  const pkg = await packageCopy();
  const app = await mkdtemp(join(scratch, 'app-'));
  await mkdir(join(app, 'node_modules'), { recursive: true });
  await mkdir(join(app, 'src'));
  await run('cp', ['-r', pkg, join(app, 'node_modules/opa-sync')]);
  await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'recipes-app', private: true, type: 'module' }));
  for (const file of ['index.html', 'main.ts']) await copyFile(join(page, file), join(app, file));
  return app;
}

/** The app, unbuilt, served by Vite's dev server with `viteConfig` as its `vite.config.ts` (as `npm run dev` does). */
export async function startDevApp(viteConfig: string): Promise<ServedApp> {
  const app = await scratchApp();
  const server = await createServer({
    logLevel: 'warn',
    clearScreen: false,
    root: app,
    configFile: await writeConfig(app, viteConfig),
    server: { host: '127.0.0.1', port: 0 },
  });
  await server.listen();
  const address = server.httpServer?.address();
  if (!address || typeof address === 'string') throw new Error('the Vite dev server did not report its port');
  return {
    url: `http://127.0.0.1:${address.port}/`,
    async close() {
      await server.close();
      await rm(app, { recursive: true, force: true });
    },
  };
}

/** Build the app, then `sw.js` from `serviceWorker` (the guide's by default) with the guide's script; serve them. */
export async function startPreviewApp(options: { viteConfig?: string; serviceWorker?: string; workbox?: boolean } = {}): Promise<PreviewApp> {
  const app = await scratchApp();
  const guide = await readFile(join(repo, 'docs/service-worker.md'), 'utf8');
  const serviceWorker = options.workbox ? guideBlock('With Workbox / vite-plugin-pwa', guide) : guideBlock('Booting offline', guide);
  await writeFile(join(app, 'src/sw.ts'), options.serviceWorker ?? serviceWorker);
  let buildScript = guideBlock('Listing the built files', guide);
  if (options.workbox) {
    // What vite-plugin-pwa's injectManifest does (not installed here): the built files as `self.__WB_MANIFEST`.
    const shell = "SHELL_FILES: JSON.stringify(['/', ...files])";
    if (!buildScript.includes(shell)) throw new Error(`the guide's build script no longer says ${shell}`);
    buildScript = buildScript.replace(shell, "'self.__WB_MANIFEST': JSON.stringify(files.map((url) => ({ url, revision: null })))");
  }
  await writeFile(join(app, 'build-sw.ts'), buildScript);

  const quiet = { logLevel: 'warn' as const, clearScreen: false };
  await build({ ...quiet, root: app, configFile: false, build: { reportCompressedSize: false } });
  await run(process.execPath, [join(repo, 'node_modules/tsx/dist/cli.mjs'), 'build-sw.ts'], { cwd: app });
  const sw = await readFile(join(app, 'dist/sw.js'), 'utf8');
  const listed = /\[\s*("\/"[^\]]*)\]/.exec(sw); // the SHELL_FILES array the script defined
  const files = listed ? (JSON.parse(`[${listed[1]}]`) as string[]) : [];
  if (!options.workbox && !files.includes('/index.html')) throw new Error('sw.js holds no list of the built files');

  const server: PreviewServer = await preview({
    ...quiet,
    root: app,
    // The app's own vite.config.ts when the recipe gives one (written after the build, which needs none).
    configFile: options.viteConfig === undefined ? false : await writeConfig(app, options.viteConfig),
    preview: { host: '127.0.0.1', port: 0, strictPort: false },
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
      await rm(app, { recursive: true, force: true });
    },
  };
}
