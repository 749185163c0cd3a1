// The published shape: build, `npm pack`, install the tarball into a throwaway app (offline, from the npm
// cache), type-check against it, build the app with its own `vite build` (all once), and sync in every engine.
import { spawn } from 'node:child_process';
import { cp, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from 'vite';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startServer } from '../server/server.ts';
import type { RefServer } from '../server/types.ts';
import { launchBrowser, type Browser, type BrowserPage } from '../support/browsers.ts';
import { forEachEngine, perBlock, waitFor } from './support/harness.ts';
import { serveStatic } from './support/static.ts';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const fixture = fileURLToPath(new URL('../consumer/app/', import.meta.url));
const SEED = 9;

interface PackedFile {
  path: string;
  size: number;
}

/** Run a command; resolves with its output, rejects with it (and the exit code) on failure. */
function run(command: string, args: string[], cwd: string): Promise<string> {
  // npm's own npm_* variables (set when the suite runs under `npm test`) must not steer the nested npm.
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.toLowerCase().startsWith('npm_')));
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

/** The app's lockfile: the tarball, and its dependencies pinned as this repo's lockfile pins them. */
async function consumerLock(tarball: string, integrity: string): Promise<unknown> {
  const lock = JSON.parse(await readFile(join(repo, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dependencies?: Record<string, string> }> };
  const root = lock.packages[''] as { dependencies?: Record<string, string> };
  const packages: Record<string, unknown> = {
    '': { name: 'opa-sync-consumer', dependencies: { 'opa-sync': `file:${tarball}` } },
    'node_modules/opa-sync': { version: pkg.version, resolved: `file:${tarball}`, integrity, dependencies: root.dependencies },
  };
  const pending = Object.keys(root.dependencies ?? {});
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    const key = `node_modules/${name}`;
    if (packages[key]) continue;
    const entry = lock.packages[key];
    if (!entry) throw new Error(`${name} is not in package-lock.json`);
    packages[key] = entry;
    pending.push(...Object.keys(entry.dependencies ?? {}));
  }
  return { name: 'opa-sync-consumer', lockfileVersion: 3, requires: true, packages };
}

let work: string;
let app: string;
let packed: PackedFile[];
let pkg: { version: string; exports: Record<string, string | Record<string, string>>; types: string; main: string; files: string[] };
let workerAsset: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'opa-sync-package-'));
  // `npm pack` builds first through the `prepack` script (so a publish never ships a stale dist/).
  pkg = JSON.parse(await readFile(join(repo, 'package.json'), 'utf8'));
  const packOutput = await run('npm', ['pack', '--json', '--pack-destination', work], repo);
  const indexJs = await readFile(join(repo, 'dist/index.js'), 'utf8');
  // The worker URL is relative to the module (base './'), never a root-absolute /assets path.
  const match = /new URL\(\s*"(assets\/[^"]+\.js)",\s*import\.meta\.url\s*\)/.exec(indexJs);
  if (!match) throw new Error(`dist/index.js does not spawn its worker from a module-relative URL:\n${indexJs.slice(0, 2000)}`);
  workerAsset = `dist/${match[1]}`;

  // The prepack build may print before npm's JSON: parse from where the JSON array starts.
  const [info] = JSON.parse(packOutput.slice(packOutput.search(/^\[\s*\{/m))) as {
    filename: string;
    integrity: string;
    files: PackedFile[];
  }[];
  packed = info.files;
  const tarball = join(work, info.filename);

  app = join(work, 'app');
  await cp(fixture, app, { recursive: true });
  const dependencies = { 'opa-sync': `file:${tarball}` };
  await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'opa-sync-consumer', private: true, type: 'module', dependencies }, null, 2));
  await writeFile(join(app, 'package-lock.json'), JSON.stringify(await consumerLock(tarball, info.integrity), null, 2));
  // Offline: dexie and comlink come from the npm cache that installing this repo filled (`npm ci` fetches by
  // the lockfile's integrity; resolving versions afresh would need registry metadata `npm ci` never cached).
  await run('npm', ['ci', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], app);
  // The app's own build, with the vite this repo has (the app itself depends only on opa-sync).
  await run(process.execPath, [join(repo, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn'], app);
});

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('ships the entries, the worker asset and the declarations, and nothing from src or test', () => {
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

  it('type-checks a TypeScript consumer against the installed declarations', async () => {
    const tsc = join(repo, 'node_modules/typescript/bin/tsc');
    const modes = [
      ['esnext', 'bundler'],
      ['node16', 'node16'],
    ];
    await Promise.all(
      modes.map(async ([module, moduleResolution]) => {
        const config = {
          compilerOptions: { noEmit: true, strict: true, skipLibCheck: true, target: 'es2022', lib: ['es2022', 'dom'], types: [], module, moduleResolution },
          files: ['types.ts'],
        };
        const file = `tsconfig.${moduleResolution}.json`;
        await writeFile(join(app, file), JSON.stringify(config));
        await run(process.execPath, [tsc, '-p', file], app);
      }),
    );
  });
});

describe('a Vite app built against the tarball', () => {
  it('emits the worker as its own asset and keeps Dexie out of a page that does not use it', async () => {
    const assets = await readdir(join(app, 'dist/assets'));
    expect(assets.filter((f) => /^opa-sync-worker-.*\.js$/.test(f))).toHaveLength(1);
    expect(existsSync(join(app, 'dist/index.html'))).toBe(true);
    // main.js uses createSyncClient only: the page needs comlink, not Dexie (which lives in the worker).
    const pageChunks = assets.filter((f) => f.endsWith('.js') && !f.startsWith('opa-sync-worker-'));
    expect(pageChunks.length).toBeGreaterThan(0);
    for (const chunk of pageChunks) {
      const code = await readFile(join(app, 'dist/assets', chunk), 'utf8');
      expect(code, chunk).not.toContain('Dexie');
      expect(code.length, chunk).toBeLessThan(30_000);
    }
  });
});

forEachEngine((engine) => {
  describe('the app in the browser', () => {
    const started = perBlock(
      async () => {
        const browser = await launchBrowser(engine);
        return { browser, server: await startServer({ port: 0, seed: SEED }), site: await serveStatic(join(app, 'dist')) };
      },
      async ({ browser, server, site }) => {
        await browser.close();
        await server.close();
        await site.close();
      },
    );
    let server: RefServer;
    let browser: Browser;
    let site: Awaited<ReturnType<typeof serveStatic>>;

    beforeEach(() => {
      ({ browser, server, site } = started());
    });

    it('syncs through the packaged worker and shows the server’s subscription count', async () => {
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

    it("also works under the app's Vite dev server (dependency pre-bundling keeps the worker URL valid)", async () => {
      const served: { path: string; status: number }[] = [];
      const dev = await createServer({
        root: app,
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
        server: { host: '127.0.0.1', port: 0, strictPort: false, hmr: false, watch: null },
      });
      await dev.listen();
      try {
        const address = dev.httpServer?.address();
        if (!address || typeof address === 'string') throw new Error('no dev server port');
        const origin = `http://127.0.0.1:${address.port}`;
        server.reset();
        const context = await browser.newContext();
        const page = await context.newPage();
        await expectSeedCount(page, origin, server);
        expect(served.filter((r) => r.path.includes('opa-sync-worker')).map((r) => r.path)).toEqual([
          expect.stringMatching(/^\/node_modules\/opa-sync\/dist\/assets\/opa-sync-worker-[^/]+\.js$/),
        ]);
        expect(served.filter((r) => r.status >= 400)).toEqual([]);
        await context.close();
      } finally {
        await dev.close();
      }
    });
  });
});
