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

  it('--protocol gpodder prints its base URL, dialect and credentials, and serves them', async () => {
    const args = ['test/server/cli.ts', '--protocol', 'gpodder', '--port', '0', '--dialect', 'opodsync', '--user', 'carol:pw:with:colons'];
    const child = spawn(process.execPath, [tsx, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const lines: string[] = [];
      await new Promise<void>((resolve, reject) => {
        createInterface({ input: child.stdout! }).on('line', (line) => {
          lines.push(line);
          if (lines.length === 3) resolve();
        });
        child.once('exit', (code) => reject(new Error(`cli exited early with ${code}`)));
      });
      const match = /^listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(lines[0]);
      expect(match, lines[0]).not.toBeNull();
      expect(lines[1]).toMatch(/^protocol gpodder, opodsync dialect/);
      expect(lines[2]).toBe('user carol password pw:with:colons');
      const auth = `Basic ${Buffer.from('carol:pw:with:colons').toString('base64')}`;
      const res = await fetch(`${match![1]}/index.php/apps/gpoddersync/subscriptions?since=0`, { headers: { Authorization: auth } });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ add: [], remove: [], update_urls: [] });
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
        child.kill('SIGTERM');
        expect(await exited).toBe(0);
      }
    }
  });

  it('refuses a flag of the other protocol, or an unknown protocol, with exit code 2', async () => {
    for (const args of [['--protocol', 'gpodder', '--token', 't'], ['--dialect', 'mygpo'], ['--protocol', 'soap']]) {
      const child = spawn(process.execPath, [tsx, 'test/server/cli.ts', '--port', '0', ...args], { cwd: root, stdio: 'ignore' });
      expect(await new Promise((resolve) => child.once('exit', resolve)), args.join(' ')).toBe(2);
    }
  });

  it('refuses a bad flag value with exit code 2', async () => {
    const child = spawn(process.execPath, [tsx, 'test/server/cli.ts', '--port', 'eighty'], { cwd: root, stdio: 'ignore' });
    expect(await new Promise((resolve) => child.once('exit', resolve))).toBe(2);
  });
});
