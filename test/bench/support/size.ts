// Bundle sizes: gzip bytes (zlib level 9) of what a page loads from the package (the page entry and the local
// chunks it imports statically; dexie and comlink are the app's, external) and of the module worker it spawns
// (self-contained: its own Dexie and comlink). Read from `npm run build`'s dist/ when it is complete, else from
// a copy built into a temp dir by the same Vite build (vite.config.ts).
// The service worker's import (`opa-sync/sw`) is reported beside them, with no budget: `sw.js` and what it imports
// from the package (Dexie external), and the entry bundled whole as an app's service worker build would.
// The worker's source map splits it by module: the engine's own share is the bundle without Dexie's and
// comlink's code. The store's addition to the page entry is the entry built as is minus built without it.
import { existsSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build, type Plugin } from 'vite';
import type { SwSize } from './sw-size.ts';

const repo = fileURLToPath(new URL('../../../', import.meta.url));

/** The size figures. */
export interface SizeResult {
  pageGzipBytes: number;
  workerGzipBytes: number;
  /** `dist` (npm run build's output) or `own-build` (built here with equivalent settings). */
  source: 'dist' | 'own-build';
  /** Every file counted, relative to the build dir, with its raw and gzip bytes. */
  files: { file: string; part: 'page' | 'worker' | 'sw'; bytes: number; gzipBytes: number }[];
  /** The service worker's import, `sw.js` and the local files it imports (Dexie external, as the app bundles it), gzip. No budget. */
  swGzipBytes: number;
  /** `opa-sync/sw` bundled whole into an app's service worker, with and without Dexie (`sw-size.ts`; the bench adds it). */
  swBundle?: SwSize;
  /**
   * The worker bundle without Dexie's and comlink's code, gzip: the engine's own share, code this project
   * writes (undefined when the bundle has no source map to tell them apart).
   */
  workerOwnGzipBytes?: number;
  /** Dexie's and comlink's code in the worker bundle, each gzipped alone. */
  workerDepsGzipBytes?: { dexie: number; comlink: number };
  /** Each source module's cost in the worker bundle: how much its gzip shrinks without that module's code. Largest first. */
  workerModules?: { source: string; bytes: number; gzipBytes: number }[];
  /** What `client.store()` adds to the page entry, gzip: the entry built as is minus built with the store left out. */
  storeGzipBytes: number;
}

const gz = (text: Buffer | string): number => gzipSync(text, { level: 9 }).length;

/** Which part of the bundle a source-map source is: a dependency by package, else its path in the repo. */
function owner(source: string): string {
  const dep = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(source);
  if (dep) return dep[1]!;
  return source.startsWith('file:') ? relative(repo, fileURLToPath(source)) : source.replace(/^(?:\.\.\/)+/, '');
}

/** The worker's code split by source module (through its source map, when there is one beside it). */
async function composition(file: string): Promise<Pick<SizeResult, 'workerOwnGzipBytes' | 'workerDepsGzipBytes' | 'workerModules'>> {
  if (!existsSync(`${file}.map`)) return {};
  const code = await readFile(file, 'utf8');
  const map = new SourceMap(JSON.parse(await readFile(`${file}.map`, 'utf8')) as SourceMapPayload);
  // Each character's module: the source of the mapping segment it falls in.
  const of: (string | undefined)[] = new Array(code.length);
  let start = 0;
  code.split('\n').forEach((text, line) => {
    for (let col = 0; col < text.length; col++) {
      const entry = map.findEntry(line, col) as { generatedLine?: number; originalSource?: string };
      of[start + col] = entry.generatedLine === line ? entry.originalSource : undefined;
    }
    start += text.length + 1;
  });
  const parts = new Map<string, number[]>();
  for (let i = 0; i < code.length; i++) {
    const name = of[i] === undefined ? '(no source)' : owner(of[i]!);
    let at = parts.get(name);
    if (!at) parts.set(name, (at = []));
    at.push(i);
  }
  const pick = (keep: (name: string) => boolean): string => {
    let out = '';
    for (const [name, at] of parts) if (keep(name)) for (const i of at) out += code[i];
    return out;
  };
  // Characters kept in bundle order, so what stays compresses as it does in the bundle.
  const without = (names: string[]): string => {
    const drop = new Uint8Array(code.length);
    for (const name of names) for (const i of parts.get(name) ?? []) drop[i] = 1;
    let out = '';
    for (let i = 0; i < code.length; i++) if (!drop[i]) out += code[i];
    return out;
  };
  const whole = gz(code);
  return {
    workerOwnGzipBytes: gz(without(['dexie', 'comlink'])),
    workerDepsGzipBytes: { dexie: gz(pick((n) => n === 'dexie')), comlink: gz(pick((n) => n === 'comlink')) },
    workerModules: [...parts.keys()]
      .map((source) => ({ source, bytes: parts.get(source)!.length, gzipBytes: whole - gz(without([source])) }))
      .sort((a, b) => b.gzipBytes - a.gzipBytes),
  };
}

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

async function measure(dir: string, source: SizeResult['source']): Promise<Omit<SizeResult, 'storeGzipBytes'>> {
  const pageFiles = await withLocalImports(join(dir, 'index.js'));
  let workerName: string | undefined;
  for (const file of pageFiles) {
    workerName ??= /(?:assets\/)?opa-sync-worker-[\w-]+\.js/.exec(await readFile(file, 'utf8'))?.[0];
  }
  if (!workerName) throw new Error(`no worker asset referenced from ${join(dir, 'index.js')}`);
  const workerEntry = join(dir, workerName.startsWith('assets/') ? workerName : join('assets', workerName));
  const workerFiles = await withLocalImports(workerEntry);
  const swFiles = await withLocalImports(join(dir, 'sw.js'));
  const files: SizeResult['files'] = [];
  for (const [part, list] of [['page', pageFiles], ['worker', workerFiles], ['sw', swFiles]] as const) {
    for (const file of list) {
      const body = await readFile(file);
      files.push({ file: relative(dir, file), part, bytes: body.length, gzipBytes: gz(body) });
    }
  }
  const sum = (part: SizeResult['files'][number]['part']) => files.filter((f) => f.part === part).reduce((n, f) => n + f.gzipBytes, 0);
  // The worker is one file (its Dexie and comlink inside): its composition is that file's.
  const split = workerFiles.length === 1 ? await composition(workerEntry) : {};
  return { pageGzipBytes: sum('page'), workerGzipBytes: sum('worker'), swGzipBytes: sum('sw'), source, files, ...split };
}

function distComplete(dir: string): boolean {
  return existsSync(join(dir, 'index.js')) && existsSync(join(dir, 'assets'));
}

/** The client with `store()` left out: its import of the store resolved to a stub that makes none. */
function withoutStore(): Plugin {
  const stub = '\0opa-sync-bench:no-store';
  return {
    name: 'opa-sync-bench:no-store',
    enforce: 'pre',
    resolveId: (id, importer) => (id === './store.ts' && importer?.endsWith('/src/client.ts') ? stub : null),
    load: (id) => (id === stub ? 'export const createStores = () => () => undefined;' : null),
  };
}

/** Build a copy of the package into `outDir`: `npm run build`'s Vite step as it is, plus `plugins`. */
async function ownBuild(outDir: string, plugins: Plugin[] = []): Promise<void> {
  await build({
    configFile: join(repo, 'vite.config.ts'),
    root: repo,
    logLevel: 'warn',
    clearScreen: false,
    plugins,
    build: { outDir, emptyOutDir: true, reportCompressedSize: false },
  });
}

/** The page entry's gzip bytes in a fresh build, with or without the store. */
async function pageEntryGzip(withStore: boolean): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'opa-bench-store-'));
  try {
    await ownBuild(dir, withStore ? [] : [withoutStore()]);
    return (await measure(dir, 'own-build')).pageGzipBytes;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Sizes from dist/ when `npm run build` left a complete one (unless `forceOwnBuild`), else from a fresh build. */
export async function measureSize(forceOwnBuild = false): Promise<SizeResult> {
  // Both store builds are fresh ones of the same shape, whatever dist/ holds: only their difference counts.
  const storeGzipBytes = (await pageEntryGzip(true)) - (await pageEntryGzip(false));
  const dist = join(repo, 'dist');
  if (!forceOwnBuild && distComplete(dist)) {
    try {
      return { ...(await measure(dist, 'dist')), storeGzipBytes };
    } catch {
      // A dist/ being rebuilt right now, or of another shape: build our own copy below.
    }
  }
  const dir = await mkdtemp(join(tmpdir(), 'opa-bench-size-'));
  try {
    await ownBuild(dir);
    return { ...(await measure(dir, 'own-build')), storeGzipBytes };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
