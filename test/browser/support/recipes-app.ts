// The docs' recipes as an app runs them, from the package as an app installs it: a scratch app (the offline-boot
// page, test/browser/pages/offline-boot/) whose node_modules/opa-sync is this package built as `npm pack` ships
// it; `vite build` with no configuration (the README's promise); its service worker taken verbatim from
// docs/service-worker.md ("Booting offline") and built by that guide's own script ("Listing the built files");
// all served by `vite preview`, with the `preview.proxy` of docs/servers.md when given.
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build, preview, type PreviewServer } from 'vite';
import { codeBlocks } from '../../node/docs/markdown.ts';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../../../', import.meta.url));
const page = fileURLToPath(new URL('../pages/offline-boot/', import.meta.url));
// Inside the repository (git-ignored /tmp/): the guide's build script imports `vite`, resolved from here.
const scratch = join(repo, 'tmp/recipes');

/** The first ts block of docs/service-worker.md under `heading`. */
function guideBlock(heading: string, text: string): string {
  const from = text.indexOf(`\n## ${heading}`);
  const block = from < 0 ? undefined : codeBlocks('docs/service-worker.md', text.slice(from)).find((b) => b.lang === 'ts');
  if (!block) throw new Error(`docs/service-worker.md has no ts block under "## ${heading}"`);
  return block.code;
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

/** An app served by `vite preview`: `stop()` takes its origin off the network, `close()` also removes it. */
export interface PreviewApp {
  /** `http://127.0.0.1:PORT/` */
  url: string;
  /** The built files the service worker caches, as its build listed them. */
  files: string[];
  stop(): Promise<void>;
  close(): Promise<void>;
}

/** Build the app, then `sw.js` from `serviceWorker` (the guide's by default) with the guide's script; serve them. */
export async function startPreviewApp(options: { proxy?: Record<string, string>; serviceWorker?: string; workbox?: boolean } = {}): Promise<PreviewApp> {
  const pkg = await packageCopy();
  const app = await mkdtemp(join(scratch, 'app-'));
  await mkdir(join(app, 'node_modules'), { recursive: true });
  await mkdir(join(app, 'src'));
  await run('cp', ['-r', pkg, join(app, 'node_modules/opa-sync')]);
  await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'recipes-app', private: true, type: 'module' }));
  for (const file of ['index.html', 'main.ts']) await copyFile(join(page, file), join(app, file));
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
    configFile: false,
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
      await rm(app, { recursive: true, force: true });
    },
  };
}
