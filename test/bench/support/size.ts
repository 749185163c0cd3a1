// Bundle sizes: gzip bytes (zlib level 9) of what a page loads from the package (the page entry and the local
// chunks it imports statically; dexie and comlink are the app's, external) and of the module worker it spawns
// (self-contained: its own Dexie and comlink). Read from `npm run build`'s dist/ when it is complete, else from
// a copy built into a temp dir with equivalent settings.
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'vite';

const repo = fileURLToPath(new URL('../../../', import.meta.url));

/** The size figures. */
export interface SizeResult {
  pageGzipBytes: number;
  workerGzipBytes: number;
  /** `dist` (npm run build's output) or `own-build` (built here with equivalent settings). */
  source: 'dist' | 'own-build';
  /** Every file counted, relative to the build dir, with its raw and gzip bytes. */
  files: { file: string; part: 'page' | 'worker'; bytes: number; gzipBytes: number }[];
}

const gz = (text: Buffer): number => gzipSync(text, { level: 9 }).length;

/** A file and the local files it imports statically (relative specifiers), transitively. */
async function withLocalImports(entry: string): Promise<string[]> {
  const seen = new Set<string>();
  const visit = async (file: string): Promise<void> => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = await readFile(file, 'utf8');
    const specifiers = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*)["'](\.{1,2}\/[^"']+)["']/g)].map((m) => m[1]!);
    for (const s of specifiers) await visit(resolve(dirname(file), s));
  };
  await visit(entry);
  return [...seen];
}

async function measure(dir: string, source: SizeResult['source']): Promise<SizeResult> {
  const pageFiles = await withLocalImports(join(dir, 'index.js'));
  let workerName: string | undefined;
  for (const file of pageFiles) {
    workerName ??= /(?:assets\/)?opa-sync-worker-[\w-]+\.js/.exec(await readFile(file, 'utf8'))?.[0];
  }
  if (!workerName) throw new Error(`no worker asset referenced from ${join(dir, 'index.js')}`);
  const workerEntry = join(dir, workerName.startsWith('assets/') ? workerName : join('assets', workerName));
  const workerFiles = await withLocalImports(workerEntry);
  const files: SizeResult['files'] = [];
  for (const [part, list] of [['page', pageFiles], ['worker', workerFiles]] as const) {
    for (const file of list) {
      const body = await readFile(file);
      files.push({ file: relative(dir, file), part, bytes: body.length, gzipBytes: gz(body) });
    }
  }
  const sum = (part: 'page' | 'worker') => files.filter((f) => f.part === part).reduce((n, f) => n + f.gzipBytes, 0);
  return { pageGzipBytes: sum('page'), workerGzipBytes: sum('worker'), source, files };
}

function distComplete(dir: string): boolean {
  return existsSync(join(dir, 'index.js')) && existsSync(join(dir, 'assets'));
}

/** Build a copy of the package (page entry + worker asset) with the library build's settings. */
async function ownBuild(outDir: string): Promise<void> {
  await build({
    configFile: false,
    root: repo,
    logLevel: 'warn',
    clearScreen: false,
    base: './',
    build: {
      outDir,
      emptyOutDir: true,
      target: 'es2022',
      minify: true,
      sourcemap: false,
      reportCompressedSize: false,
      lib: { entry: { index: join(repo, 'src/index.ts') }, formats: ['es'] },
      rolldownOptions: { external: ['dexie', 'comlink'] },
    },
    worker: {
      format: 'es',
      rolldownOptions: { output: { entryFileNames: 'assets/opa-sync-worker-[hash].js', chunkFileNames: 'assets/opa-sync-worker-[name]-[hash].js' } },
    },
  });
}

/** Sizes from dist/ when `npm run build` left a complete one (unless `forceOwnBuild`), else from a fresh build. */
export async function measureSize(forceOwnBuild = false): Promise<SizeResult> {
  const dist = join(repo, 'dist');
  if (!forceOwnBuild && distComplete(dist)) {
    try {
      return await measure(dist, 'dist');
    } catch {
      // A dist/ being rebuilt right now, or of another shape: build our own copy below.
    }
  }
  const dir = await mkdtemp(join(tmpdir(), 'opa-bench-size-'));
  try {
    await ownBuild(dir);
    return await measure(dir, 'own-build');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
