// Every TypeScript example in README.md and docs/ compiles against the package's published types: each fenced
// ```ts / ```tsx block becomes a module of its own in a scratch project where `opa-sync` is the package as
// npm would install it (package.json with its `exports`, and the declarations `npm run build` emits), resolved
// through `exports` as an app resolves it. A block that cannot stand alone says so just above its fence:
// `<!-- fragment: why -->`.
import { execFile } from 'node:child_process';
import { copyFile, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { codeBlocks, guideFiles, read, repo, type CodeBlock } from './docs/markdown.ts';

const run = promisify(execFile);
const scratch = join(repo, 'tmp/doc-examples'); // inside the repository, so react, vue and vite resolve from it

/** Every ts/tsx block of the project's markdown. */
const blocks: CodeBlock[] = guideFiles().flatMap((file) => codeBlocks(file, read(file))).filter((b) => b.lang === 'ts' || b.lang === 'tsx');

/** The scratch file a block is written to. */
const fileOf = (block: CodeBlock, index: number) => `${block.file.replace(/[/.]/g, '_')}_L${block.line}_${index}.${block.lang}`;

describe('docs: every TypeScript example compiles against the published types', () => {
  let diagnostics = '';

  beforeAll(async () => {
    await rm(scratch, { recursive: true, force: true });
    const pkg = join(scratch, 'node_modules/opa-sync');
    await mkdir(pkg, { recursive: true });
    await copyFile(join(repo, 'package.json'), join(pkg, 'package.json'));
    const tsc = join(repo, 'node_modules/typescript/bin/tsc');
    await run(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--declarationDir', join(pkg, 'dist/types')], { cwd: repo });
    await symlink(join(repo, 'node_modules/@types'), join(scratch, 'node_modules/@types'), 'dir');
    const files = blocks.filter((b) => !b.fragment).map((block, i) => {
      const name = fileOf(block, i);
      return { name, text: `${block.code}export {};\n` };
    });
    for (const { name, text } of files) await writeFile(join(scratch, name), text);
    // A package of its own: else TypeScript resolves `opa-sync` to this repository by its own name (self-reference).
    await writeFile(join(scratch, 'package.json'), JSON.stringify({ name: 'doc-examples', private: true, type: 'module' }));
    await writeFile(join(scratch, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        target: 'ES2022', module: 'ESNext', moduleResolution: 'Bundler', lib: ['ES2022', 'DOM', 'DOM.Iterable', 'WebWorker'],
        types: ['node'], strict: true, noEmit: true, skipLibCheck: true, jsx: 'react-jsx', isolatedModules: true,
      },
      files: files.map((f) => f.name),
    }));
    diagnostics = await run(process.execPath, [tsc, '-p', join(scratch, 'tsconfig.json'), '--pretty', 'false'], { cwd: scratch })
      .then(() => '')
      .catch((e: { stdout?: string; stderr?: string }) => `${e.stdout ?? ''}${e.stderr ?? ''}`);
  }, 120_000);

  it('finds the examples: the README, the store, errors, servers, the service worker', () => {
    const where = new Set(blocks.map((b) => b.file));
    for (const file of ['README.md', 'docs/store.md', 'docs/errors.md', 'docs/servers.md', 'docs/service-worker.md']) expect(where).toContain(file);
  });

  it('each block type-checks as a module of its own (strict), importing opa-sync, opa-sync/worker, opa-sync/sw', () => {
    // Name each failure by its markdown file and line: the scratch file names say both.
    expect(diagnostics.split('\n').filter(Boolean)).toEqual([]);
  });

  it('a fragment says why it cannot stand alone', () => {
    for (const block of blocks.filter((b) => b.fragment)) expect(block.fragment!.length, `${block.file}:${block.line}`).toBeGreaterThan(10);
  });
});
