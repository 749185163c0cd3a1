// The packed tarball, checked by the ecosystem's own tools as a library author runs them before a release:
// publint (package.json against the files it names) and Are the Types Wrong (every entry's types resolve in
// node16 ESM and bundler resolution; ESM only, so CommonJS and node10 resolution are out of scope).
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { publint } from 'publint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repo } from './docs/markdown.ts';

const run = promisify(execFile);

/** One problem attw found: its kind, the entry, and the resolution mode it was found in. */
interface AttwProblem {
  kind: string;
  entrypoint: string;
  resolutionKind?: string;
}

describe('package: the packed tarball under publint and attw', () => {
  let dir: string;
  let tarball: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'opa-sync-pack-'));
    // What `prepare` builds, built into a staging copy of the package, then packed there: the same tarball as
    // `npm pack` in the repository, without rebuilding the repository's dist/ under other tests that read it.
    const stage = join(dir, 'stage');
    await run(process.execPath, [join(repo, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'error', '--outDir', join(stage, 'dist')], { cwd: repo });
    await run(process.execPath, [join(repo, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--declarationDir', join(stage, 'dist/types')], { cwd: repo });
    for (const file of ['package.json', 'README.md']) await copyFile(join(repo, file), join(stage, file));
    await run('npm', ['pack', '--ignore-scripts', '--pack-destination', dir, '--silent'], { cwd: stage, maxBuffer: 16 * 1024 * 1024 });
    const [file] = (await readdir(dir)).filter((f) => f.endsWith('.tgz'));
    tarball = join(dir, file!);
    await mkdir(join(dir, 'unpacked'));
    await run('tar', ['-xzf', tarball, '-C', join(dir, 'unpacked')]);
  }, 180_000);

  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('publint finds nothing, suggestions included, in what npm pack ships', async () => {
    const { messages } = await publint({ pkgDir: join(dir, 'unpacked/package'), pack: false, level: 'suggestion', strict: true });
    expect(messages).toEqual([]);
  });

  it('attw: the three entries resolve with their types in node16 ESM and bundler resolution', async () => {
    const attw = join(repo, 'node_modules/@arethetypeswrong/cli/dist/index.js');
    const { stdout } = await run(process.execPath, [attw, tarball, '--profile', 'esm-only', '--format', 'json'], { maxBuffer: 16 * 1024 * 1024 });
    const report = JSON.parse(stdout) as { analysis: { entrypoints: Record<string, unknown>; problems: AttwProblem[] } };
    expect(Object.keys(report.analysis.entrypoints).sort()).toEqual(['.', './package.json', './sw', './worker']);
    const ignored = new Set(['node10', 'node16-cjs']); // ESM only: no `require`, no pre-exports resolution
    expect(report.analysis.problems.filter((p) => !p.resolutionKind || !ignored.has(p.resolutionKind))).toEqual([]);
  });
});
