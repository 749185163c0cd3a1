// The worker's floors (issue 25): the store (worker/store/) imports nothing from the floors above it
// (episodes/, engine/, the transports): what follows a feed that moves is plugged in by the engine
// (engine/store.ts). Type imports count too.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const worker = fileURLToPath(new URL('../../worker/', import.meta.url));

/** Every relative import and re-export of `file`, as paths under worker/. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:import|export)[^'"]*?from\s+'(\.[^']+)'/g)].map((m) => relative(worker, resolve(dirname(file), m[1]!)));
}

describe('worker floors', () => {
  it('worker/store/ imports only itself and the floors below it (no episodes/, engine/, opa/, gpodder/)', () => {
    const dir = join(worker, 'store');
    const upward = readdirSync(dir)
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) => importsOf(join(dir, f)).filter((to) => /^(episodes|engine|opa|gpodder)\//.test(to) || to === 'engine.ts').map((to) => `store/${f} -> ${to}`));
    expect(upward).toEqual([]);
  });

  it("worker/transport.ts, the seam both protocols implement, imports nothing from a protocol's folder (issue 31)", () => {
    expect(importsOf(join(worker, 'transport.ts')).filter((to) => /^(opa|gpodder)\//.test(to))).toEqual([]);
  });
});
