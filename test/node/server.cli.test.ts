import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/tsx/dist/cli.mjs', import.meta.url));

describe('cli', () => {
  it('prints its listening line, serves the seeded data with the given token, and stops on SIGTERM', async () => {
    const child = spawn(process.execPath, [tsx, 'test/server/cli.ts', '--port', '0', '--seed', '7', '--token', 'cli-token'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout! }).once('line', resolve);
        child.once('exit', (code) => reject(new Error(`cli exited early with ${code}`)));
      });
      const match = /^listening on (http:\/\/127\.0\.0\.1:(\d+)\/v1)$/.exec(line);
      expect(match, line).not.toBeNull();
      const res = await fetch(`${match![1]}/subscriptions`, { headers: { Authorization: 'Bearer cli-token' } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { total: number }).total).toBe(7);
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
        child.kill('SIGTERM');
        expect(await exited).toBe(0);
      }
    }
  });

  it('refuses a bad flag value with exit code 2', async () => {
    const child = spawn(process.execPath, [tsx, 'test/server/cli.ts', '--port', 'eighty'], { cwd: root, stdio: 'ignore' });
    expect(await new Promise((resolve) => child.once('exit', resolve))).toBe(2);
  });
});
