// What an app's service worker carries for `opa-sync/sw`: the entry bundled whole (its own Dexie, the engine),
// minified as the library build minifies, gzip level 9; and the same without Dexie (the library's own code).
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'vite';

const repo = fileURLToPath(new URL('../../../', import.meta.url));

/** Gzip bytes of the service worker's import of the library, with and without Dexie. */
export interface SwSize {
  gzipBytes: number;
  withoutDexieGzipBytes: number;
}

async function bundle(external: string[]): Promise<number> {
  const outDir = await mkdtemp(join(tmpdir(), 'opa-sync-sw-size-'));
  try {
    await build({
      configFile: false,
      root: repo,
      logLevel: 'silent',
      resolve: { alias: { dexie: `${repo}node_modules/dexie/dist/modern/dexie.min.mjs` } },
      build: {
        outDir, emptyOutDir: true, target: 'es2022', minify: true, reportCompressedSize: false,
        lib: { entry: { sw: 'worker/sw.ts' }, formats: ['es'] },
        rolldownOptions: { external, output: { codeSplitting: false, comments: { legal: true, annotation: false, jsdoc: false } } },
      },
    });
    const files = (await readdir(outDir)).filter((f) => f.endsWith('.js'));
    const code = (await Promise.all(files.map((f) => readFile(join(outDir, f))))).map(String).join('\n');
    return gzipSync(code, { level: 9 }).length;
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
}

/** Measure `opa-sync/sw` as a service worker bundles it. */
export async function measureSwSize(): Promise<SwSize> {
  return { gzipBytes: await bundle([]), withoutDexieGzipBytes: await bundle(['dexie']) };
}
