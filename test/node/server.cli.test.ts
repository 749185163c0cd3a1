import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/tsx/dist/cli.mjs', import.meta.url));

/** Run `npm run server -- ...args` and use its first `count` output lines; it must then stop on SIGTERM with 0. */
async function withCli(args: string[], count: number, use: (lines: string[]) => Promise<void>): Promise<void> {
  const child: ChildProcess = spawn(process.execPath, [tsx, 'test/server/cli.ts', ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    const lines = await new Promise<string[]>((resolve, reject) => {
      const seen: string[] = [];
      createInterface({ input: child.stdout! }).on('line', (line) => {
        seen.push(line);
        if (seen.length === count) resolve(seen);
      });
      child.once('exit', (code) => reject(new Error(`cli exited early with ${code}`)));
    });
    await use(lines);
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  }
}

/** The exit code of `npm run server -- ...args`. */
const exitCode = (args: string[]): Promise<number | null> =>
  new Promise((resolve) => spawn(process.execPath, [tsx, 'test/server/cli.ts', ...args], { cwd: root, stdio: 'ignore' }).once('exit', resolve));

describe('cli', () => {
  it('prints its listening line, serves the seeded data with the given token, and stops on SIGTERM', async () => {
    await withCli(['--port', '0', '--seed', '7', '--token', 'cli-token'], 1, async ([line]) => {
      const match = /^listening on (http:\/\/127\.0\.0\.1:(\d+)\/v1)$/.exec(line);
      expect(match, line).not.toBeNull();
      const res = await fetch(`${match![1]}/subscriptions`, { headers: { Authorization: 'Bearer cli-token' } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { total: number }).total).toBe(7);
    });
  });

  it('--protocol gpodder prints its base URL, dialect and credentials, and serves them', async () => {
    const args = ['--protocol', 'gpodder', '--port', '0', '--dialect', 'opodsync', '--user', 'carol:pw:with:colons'];
    await withCli(args, 3, async (lines) => {
      const match = /^listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(lines[0]);
      expect(match, lines[0]).not.toBeNull();
      expect(lines[1]).toMatch(/^protocol gpodder, opodsync dialect/);
      expect(lines[2]).toBe('user carol password pw:with:colons');
      const auth = `Basic ${Buffer.from('carol:pw:with:colons').toString('base64')}`;
      const res = await fetch(`${match![1]}/index.php/apps/gpoddersync/subscriptions?since=0`, { headers: { Authorization: auth } });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ add: [], remove: [], update_urls: [] });
    });
  });

  it('refuses a flag of the other protocol, or an unknown protocol, with exit code 2', async () => {
    for (const args of [['--protocol', 'gpodder', '--token', 't'], ['--dialect', 'mygpo'], ['--protocol', 'soap']]) {
      expect(await exitCode(['--port', '0', ...args]), args.join(' ')).toBe(2);
    }
  });

  it('refuses a bad flag value with exit code 2', async () => {
    expect(await exitCode(['--port', 'eighty'])).toBe(2);
  });
});
