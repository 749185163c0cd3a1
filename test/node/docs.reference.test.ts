// The API reference in docs/api/ is generated from the exported types and their JSDoc (`npm run docs`, TypeDoc
// with typedoc.json): the build must pass with warnings as errors, which fails for a public export, method or
// property (of an exported interface or type alias: what each field is for) without a doc comment and for a
// broken {@link} (typedoc.json's `requiredToBeDocumented` and `validation`, `treatWarningsAsErrors`); and what
// is committed in docs/api/ must be what the types say now: the test builds the reference into a temporary
// folder and compares it file by file with docs/api/ (same files, same text).
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repo } from './docs/markdown.ts';

const run = promisify(execFile);

/** Every file under `dir`, relative to it, sorted. */
async function tree(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name))).sort();
}

describe('docs: the generated API reference', () => {
  let out: string;
  let result: { code: number; output: string };

  beforeAll(async () => {
    out = await mkdtemp(join(tmpdir(), 'opa-sync-api-'));
    const typedoc = join(repo, 'node_modules/typedoc/bin/typedoc');
    result = await run(process.execPath, [typedoc, '--options', 'typedoc.json', '--out', out], { cwd: repo })
      .then(({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }))
      .catch((e: { code?: number; stdout?: string; stderr?: string }) => ({ code: e.code ?? 1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` }));
  }, 120_000);

  afterAll(() => rm(out, { recursive: true, force: true }));

  it('builds without a warning: every public export, method and property has a doc comment, every link resolves', () => {
    expect(result.output).not.toMatch(/\[warning\]|\[error\]/);
    expect(result.code).toBe(0);
  });

  it('docs/api/ is current (after a change to the public types or their JSDoc: npm run docs)', async () => {
    const committed = join(repo, 'docs/api');
    const files = await tree(out);
    expect(await tree(committed)).toEqual(files);
    const stale: string[] = [];
    for (const file of files) {
      if ((await readFile(join(out, file), 'utf8')) !== (await readFile(join(committed, file), 'utf8'))) stale.push(file);
    }
    expect(stale).toEqual([]);
  });
});
