// Install like any package: the three ways an app gets opa-sync, each into a fresh Vite app of its own (with its
// own vite, from the npm cache), type-checked, built with that vite (all once), then run in every engine, built
// and under its dev server:
// - tarball: `npm pack` here (the `prepare` script builds dist/ first);
// - git: a git URL (a bare clone of this working tree, git+file://): npm clones it, installs our dependencies and
//   devDependencies there, runs `prepare`, and installs what `npm pack` would ship;
// - folder: a `file:` dependency on a clean clone where `npm ci` ran (which built dist/ through `prepare`): npm
//   links the folder and runs its `prepare` again, so the app gets the folder's current source.
import { spawn } from 'node:child_process';
import { cp, lstat, mkdir, mkdtemp, readFile, readdir, realpath, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startServer } from '../server/server.ts';
import type { RefServer } from '../server/types.ts';
import { launchBrowser, type Browser, type BrowserPage } from '../support/browsers.ts';
import { forEachEngine, perBlock, waitFor } from './support/harness.ts';
import { serveStatic } from './support/static.ts';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const fixture = fileURLToPath(new URL('../consumer/app/', import.meta.url));
const SEED = 9;
const WAYS = ['tarball', 'git', 'folder'] as const;
type Way = (typeof WAYS)[number];

interface PackedFile {
  path: string;
  size: number;
}

/** Run a command; resolves with its output, rejects with it (and the exit code) on failure. */
function run(command: string, args: string[], cwd: string): Promise<string> {
  // npm's own npm_* variables (set when the suite runs under `npm test`) must not steer the nested npm, nor a
  // GIT_DIR (set when this runs from a git hook) the temp repositories.
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(npm_|git_)/i.test(key)));
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(out);
      else reject(new Error(`${command} ${args.join(' ')} (in ${cwd}) exited with ${code}\n${out}\n${err}`));
    });
  });
}

const git = (args: string[], cwd: string) =>
  run('git', ['-c', 'user.name=opa-sync test', '-c', 'user.email=test@127.0.0.1', '-c', 'commit.gpgsign=false', '-c', 'core.hooksPath=/dev/null', ...args], cwd);

/** Open the consumer app against the reference server and check it shows the seeded count, with no error. */
async function expectSeedCount(page: BrowserPage, origin: string, server: RefServer): Promise<void> {
  const query = new URLSearchParams({ server: server.url, token: 'demo-token' });
  await page.goto(`${origin}/index.html?${query}`);
  const shown = await waitFor('the app to show a count or an error', async () => {
    const now = await page.evaluate(() => ({ count: document.getElementById('count')?.textContent, error: document.getElementById('error')?.textContent }));
    return now.count !== '…' || now.error ? now : undefined;
  }, 30_000);
  expect(shown).toEqual({ count: String(SEED), error: '' });
}

/**
 * A bare git repository of this working tree as it is now (tracked and untracked files, not ignored ones, so
 * never dist/ or node_modules/): what `git clone` of the project gives, uncommitted edits included as `npm
 * pack` includes them.
 */
async function bareRepoOfWorkingTree(dir: string): Promise<string> {
  const tree = join(dir, 'tree');
  const listed = (await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], repo)).split('\0').filter(Boolean);
  for (const file of listed) {
    if (!existsSync(join(repo, file))) continue; // deleted, not yet committed
    await mkdir(dirname(join(tree, file)), { recursive: true });
    await cp(join(repo, file), join(tree, file));
  }
  await git(['init', '-q', '-b', 'main'], tree);
  await git(['add', '-A'], tree);
  await git(['commit', '-q', '-m', 'snapshot of the working tree'], tree);
  const bare = join(dir, 'opa-sync.git');
  await git(['clone', '-q', '--bare', tree, bare], dir);
  return bare;
}

/**
 * A fresh Vite app depending on opa-sync by `spec`: the fixture's files, `npm install` (packages from the npm
 * cache where it has them), then the app's own `vite build`.
 */
async function viteApp(dir: string, spec: string, extra: { allowScripts?: Record<string, boolean>; npmFlags?: string[] } = {}): Promise<string> {
  await cp(fixture, dir, { recursive: true });
  const manifest = {
    name: 'opa-sync-consumer',
    private: true,
    type: 'module',
    dependencies: { 'opa-sync': spec },
    devDependencies: { vite: viteVersion },
    ...(extra.allowScripts ? { allowScripts: extra.allowScripts } : {}),
  };
  await writeFile(join(dir, 'package.json'), JSON.stringify(manifest, null, 2));
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', ...(extra.npmFlags ?? [])], dir);
  await run(process.execPath, [join(dir, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn'], dir);
  return dir;
}

/** The app's own vite (not this repo's), for its dev server. */
async function appVite(app: string): Promise<typeof import('vite')> {
  const manifest = JSON.parse(await readFile(join(app, 'node_modules/vite/package.json'), 'utf8')) as { exports: { '.': string | { import: string } } };
  const entry = manifest.exports['.'];
  return (await import(pathToFileURL(join(app, 'node_modules/vite', typeof entry === 'string' ? entry : entry.import)).href)) as typeof import('vite');
}

let work: string;
let installs: Record<Way, PromiseSettledResult<string>>;
let bare: string;
let folder: string;
let packed: PackedFile[];
let pkg: { version: string; exports: Record<string, string | Record<string, string>>; types: string; main: string; files: string[] };
let workerAsset: string;
let viteVersion: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'opa-sync-package-'));
  pkg = JSON.parse(await readFile(join(repo, 'package.json'), 'utf8'));
  // The apps pin the vite this repo has installed: its packages are in the npm cache already.
  viteVersion = (JSON.parse(await readFile(join(repo, 'node_modules/vite/package.json'), 'utf8')) as { version: string }).version;

  const tarball = (async () => {
    // `npm pack` builds first through the `prepare` script (so a publish never ships a stale dist/).
    const packOutput = await run('npm', ['pack', '--json', '--pack-destination', work], repo);
    const indexJs = await readFile(join(repo, 'dist/index.js'), 'utf8');
    // The worker URL is relative to the module (base './'), never a root-absolute /assets path (in any quotes:
    // the minified entry writes it as a template literal).
    const match = /new URL\(\s*["'`](assets\/[^"'`]+\.js)["'`],\s*import\.meta\.url\s*\)/.exec(indexJs);
    if (!match) throw new Error(`dist/index.js does not spawn its worker from a module-relative URL:\n${indexJs.slice(0, 2000)}`);
    workerAsset = `dist/${match[1]}`;
    // The build may print before npm's JSON: parse from where the JSON array starts.
    const [info] = JSON.parse(packOutput.slice(packOutput.search(/^\[\s*\{/m))) as { filename: string; files: PackedFile[] }[];
    packed = info.files;
    return join(work, info.filename);
  })();
  const repository = bareRepoOfWorkingTree(work);
  // A git URL as a user writes one; npm 11 lists a git dependency's `prepare` as an install script to review:
  // approved here by that URL (the README's advice), and strict, so an unapproved install script would fail.
  const gitApp = repository.then(async (path) => {
    bare = path;
    const url = `git+${pathToFileURL(path).href}`;
    return viteApp(join(work, 'app-git'), url, { allowScripts: { [url]: true }, npmFlags: ['--strict-allow-scripts'] });
  });
  // The folder: a clean clone, `npm ci` in it (as its README says), then `npm install ../opa-sync` in the app.
  const folderApp = repository.then(async (path) => {
    folder = join(work, 'opa-sync');
    await git(['clone', '-q', path, folder], work);
    await run('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], folder);
    // install-links=false is npm's default (named, so a user's config cannot turn this into a packed copy).
    return viteApp(join(work, 'app-folder'), 'file:../opa-sync', { npmFlags: ['--install-links=false'] });
  });
  const tarballApp = tarball.then((path) => viteApp(join(work, 'app-tarball'), `file:${path}`));
  // Each way stands alone: one that fails to install fails its own tests, not the other ways'.
  const [t, g, f] = await Promise.allSettled([tarballApp, gitApp, folderApp]);
  installs = { tarball: t, git: g, folder: f };
}, 600_000);

/** The app that installed the package this way; throws why it could not. */
function app(way: Way): string {
  const install = installs[way];
  if (install.status === 'rejected') throw install.reason;
  return install.value;
}

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('ships the entries, the worker asset and the declarations, and nothing from src or test', () => {
    app('tarball');
    const paths = packed.map((f) => f.path);
    expect(paths).toEqual(expect.arrayContaining(['package.json', 'dist/index.js', 'dist/worker.js', workerAsset]));
    // Every path `exports`, `main` and `types` name is in the tarball (the .d.ts ones included).
    const named = [pkg.main, pkg.types];
    for (const target of Object.values(pkg.exports)) {
      if (typeof target === 'string') named.push(target);
      else named.push(...Object.values(target));
    }
    expect(named).toEqual(expect.arrayContaining(['./dist/types/src/index.d.ts', './dist/types/worker/index.d.ts']));
    for (const path of named) expect(paths, path).toContain(path.replace(/^\.\//, ''));
    expect(paths.filter((p) => p.endsWith('.d.ts')).length).toBeGreaterThan(5);
    expect(paths.filter((p) => /^(src|test|worker|demo)\//.test(p) || p.endsWith('.ts') && !p.endsWith('.d.ts'))).toEqual([]);
    expect(paths.every((p) => p === 'package.json' || p === 'README.md' || p === 'LICENSE' || p.startsWith('dist/'))).toBe(true);
  });

  it('keeps dexie and comlink external in the entries; the worker asset carries its own', async () => {
    app('tarball');
    const dist = join(repo, 'dist');
    const entries = ['index.js', 'worker.js', ...(await readdir(dist)).filter((f) => /^[\w-]+\.js$/.test(f) && f !== 'index.js' && f !== 'worker.js')];
    const imports = new Set<string>();
    for (const file of entries) {
      const code = await readFile(join(dist, file), 'utf8');
      // Only import/export statements: `from"` also occurs inside the code's own strings and templates.
      for (const m of code.matchAll(/\b(?:import|export)\s*[\w$*{}\s,]*?\bfrom\s*"([^"]+)"/g)) imports.add(m[1]);
      expect(code, file).not.toContain('class Dexie');
    }
    expect([...imports].filter((s) => !s.startsWith('./')).sort()).toEqual(['comlink', 'dexie']);
    const worker = await readFile(join(repo, workerAsset), 'utf8');
    expect(worker).not.toMatch(/\bfrom\s*"(dexie|comlink)"/);
    expect(worker).not.toMatch(/^import\s/m);
    expect(worker.length).toBeGreaterThan(50_000); // Dexie and comlink are inside
  });

});

describe.each(WAYS)('installed from %s', (way) => {
  it('type-checks a TypeScript consumer against the installed declarations', async () => {
    const dir = app(way);
    const tsc = join(repo, 'node_modules/typescript/bin/tsc');
    // Every mode against the tarball; git and folder (the same files, reached another way) under the
    // resolution a Vite app uses.
    const modes = way === 'tarball' ? [['esnext', 'bundler'], ['node16', 'node16']] : [['esnext', 'bundler']];
    await Promise.all(
      modes.map(async ([module, moduleResolution]) => {
        const config = {
          compilerOptions: { noEmit: true, strict: true, skipLibCheck: true, target: 'es2022', lib: ['es2022', 'dom'], types: [], module, moduleResolution },
          files: ['types.ts'],
        };
        const file = `tsconfig.${moduleResolution}.json`;
        await writeFile(join(dir, file), JSON.stringify(config));
        await run(process.execPath, [tsc, '-p', file], dir);
      }),
    );
  });

  it(way === 'folder' ? 'is a link to the clean clone, whose own npm ci built dist/' : 'is a copy of what `npm pack` ships, dist/ built, no sources', async () => {
    const installed = join(app(way), 'node_modules/opa-sync');
    if (way === 'folder') {
      expect((await lstat(installed)).isSymbolicLink()).toBe(true);
      expect(await realpath(installed)).toBe(await realpath(folder));
    } else {
      expect((await lstat(installed)).isSymbolicLink()).toBe(false);
      expect((await readdir(installed)).sort()).toEqual(['README.md', 'dist', 'package.json']);
    }
    for (const file of ['index.js', 'worker.js', 'types/src/index.d.ts', 'types/worker/index.d.ts']) {
      expect(existsSync(join(installed, 'dist', file)), file).toBe(true);
    }
    if (way === 'git') {
      // npm built it in its own clone of the URL, at the commit it recorded.
      const lock = JSON.parse(await readFile(join(app(way), 'package-lock.json'), 'utf8')) as { packages: Record<string, { resolved?: string }> };
      expect(lock.packages['node_modules/opa-sync']?.resolved).toMatch(new RegExp(`^git\\+${pathToFileURL(bare).href}#[0-9a-f]{40}$`));
    }
  });

  it("the app's build emits the worker as its own asset and keeps Dexie out of a page that does not use it", async () => {
    const dir = app(way);
    const assets = await readdir(join(dir, 'dist/assets'));
    expect(assets.filter((f) => /^opa-sync-worker-.*\.js$/.test(f))).toHaveLength(1);
    expect(existsSync(join(dir, 'dist/index.html'))).toBe(true);
    // main.js uses createSyncClient only: the page needs comlink, not Dexie (which lives in the worker).
    const pageChunks = assets.filter((f) => f.endsWith('.js') && !f.startsWith('opa-sync-worker-'));
    expect(pageChunks.length).toBeGreaterThan(0);
    for (const chunk of pageChunks) {
      const code = await readFile(join(dir, 'dist/assets', chunk), 'utf8');
      expect(code, chunk).not.toContain('Dexie');
      expect(code.length, chunk).toBeLessThan(30_000);
    }
  });
});

type Site = Awaited<ReturnType<typeof serveStatic>>;

/** Where the dev server serves the package's worker from: node_modules, or the linked folder by its file path. */
function devWorkerPath(way: Way): RegExp {
  if (way !== 'folder') return /^\/node_modules\/opa-sync\/dist\/assets\/opa-sync-worker-[^/]+\.js$/;
  return /^\/@fs\/.+\/opa-sync\/dist\/assets\/opa-sync-worker-[^/]+\.js$/;
}

forEachEngine((engine) => {
  describe('the apps in the browser', () => {
    const started = perBlock(
      async () => {
        const browser = await launchBrowser(engine);
        // A site for each app that installed (one that did not fails its own tests through app()).
        const built = WAYS.filter((way) => installs[way].status === 'fulfilled');
        const sites = await Promise.all(built.map((way) => serveStatic(join(app(way), 'dist'))));
        return { browser, server: await startServer({ port: 0, seed: SEED }), sites: Object.fromEntries(built.map((way, i) => [way, sites[i]!])) as Partial<Record<Way, Site>> };
      },
      async ({ browser, server, sites }) => {
        await browser.close();
        await server.close();
        for (const site of Object.values(sites)) await site?.close();
      },
    );
    let server: RefServer;
    let browser: Browser;
    let sites: Partial<Record<Way, Site>>;

    beforeEach(() => {
      ({ browser, server, sites } = started());
      server.reset();
    });

    describe.each(WAYS)('installed from %s', (way) => {
      it('syncs through the packaged worker and shows the server’s subscription count', async () => {
        app(way);
        const site = sites[way]!;
        // A fresh context: empty storage, so the app's default database (named after the server) starts empty.
        const context = await browser.newContext();
        const page = await context.newPage();
        await expectSeedCount(page, site.origin, server);
        expect(server.state()).toHaveLength(SEED);
        // The worker came from the app's own build output, next to the code that spawned it.
        expect(site.hits.filter((p) => p.includes('worker'))).toEqual([expect.stringMatching(/^\/assets\/opa-sync-worker-[^/]+\.js$/)]);
        expect(server.log().some((e) => e.method === 'GET' && e.path === '/v1/subscriptions' && e.authorized)).toBe(true);
        expect(site.misses).toEqual([]);
        expect(await page.errors()).toEqual([]);
        await context.close();
      });

      it("also works under the app's own Vite dev server", async () => {
        const served: { path: string; status: number }[] = [];
        const { createServer } = await appVite(app(way));
        const dev = await createServer({
          root: app(way),
          configFile: false,
          logLevel: 'warn',
          // Engine-neutral evidence of what the page loaded: the dev server's own record of every answer.
          plugins: [
            {
              name: 'record-requests',
              configureServer(vite) {
                vite.middlewares.use((req, res, next) => {
                  const path = new URL(req.url ?? '/', 'http://x').pathname;
                  res.on('finish', () => served.push({ path, status: res.statusCode }));
                  next();
                });
              },
            },
          ],
          // A linked folder lies outside the app: the dev server serves the worker file from it only when allowed
          // (the README's one line for this case); installed packages are inside the app's node_modules.
          server: { host: '127.0.0.1', port: 0, strictPort: false, hmr: false, watch: null, ...(way === 'folder' ? { fs: { allow: ['.', '../opa-sync'] } } : {}) },
        });
        await dev.listen();
        try {
          const address = dev.httpServer?.address();
          if (!address || typeof address === 'string') throw new Error('no dev server port');
          const context = await browser.newContext();
          const page = await context.newPage();
          await expectSeedCount(page, `http://127.0.0.1:${address.port}`, server);
          expect(served.filter((r) => r.path.includes('opa-sync-worker')).map((r) => r.path)).toEqual([expect.stringMatching(devWorkerPath(way))]);
          expect(served.filter((r) => r.status >= 400)).toEqual([]);
          await context.close();
        } finally {
          await dev.close();
        }
      });
    });
  });
});
