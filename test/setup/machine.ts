// `npm test`'s setup step (the `pretest` script; .ci/run gets it through `npm test`): checks that the machine
// has what the suite needs — the browsers of this run (BROWSERS narrows them), Xvfb for WebKit, PHP with SQLite
// for the interop tests — and on Debian as root installs what is missing; otherwise it stops with the one
// `apt-get install` line to run.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { selectedEngines } from '../support/engines.ts';
import { ENGINE_REQUIREMENTS, PHP_SQLITE, installLine, type Requirement } from '../support/requirements.ts';

let engines: ReturnType<typeof selectedEngines>;
try {
  engines = selectedEngines();
} catch (error) {
  console.error(`setup: BROWSERS=${process.env.BROWSERS}: ${(error as Error).message}`);
  process.exit(1);
}
const needed = [...new Set<Requirement>([...engines.flatMap((e) => ENGINE_REQUIREMENTS[e]), PHP_SQLITE])];
const missing = () => needed.filter((r) => !r.find());

function apt(args: string[], log: string): void {
  try {
    const out = execFileSync('apt-get', args, {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 256 * 1024 * 1024,
    });
    writeFileSync(log, out, { flag: 'a' });
  } catch (error) {
    const e = error as { stdout?: Buffer; stderr?: Buffer };
    writeFileSync(log, Buffer.concat([e.stdout ?? Buffer.alloc(0), e.stderr ?? Buffer.alloc(0)]), { flag: 'a' });
    const tail = readFileSync(log, 'utf8').split('\n').slice(-20).join('\n');
    throw new Error(`apt-get ${args.join(' ')} failed (full log: ${log}):\n${tail}`);
  }
}

const absent = missing();
if (absent.length === 0) {
  console.error(`setup: ${needed.map((r) => r.name).join(', ')} present (engines: ${engines.join(', ')})`);
} else {
  const line = installLine(absent);
  const isRoot = process.getuid?.() === 0;
  const hasApt = existsSync('/usr/bin/apt-get');
  if (!isRoot || !hasApt) {
    console.error(`setup: ${absent.map((r) => r.name).join(', ')} missing. Install with:\n\n  ${line}\n`);
    process.exit(1);
  }
  const packages = line.replace(/^apt-get install -y /, '').split(' ');
  const log = join(mkdtempSync(join(tmpdir(), 'opa-setup-')), 'apt.log');
  console.error(`setup: installing ${packages.join(' ')} (apt-get, log in ${log}) ...`);
  apt(['update', '-qq'], log);
  apt(['install', '-y', '-qq', ...packages], log);
  const still = missing();
  if (still.length) {
    console.error(`setup: still missing after apt-get: ${still.map((r) => r.name).join(', ')}. Install with:\n\n  ${installLine(still)}\n`);
    process.exit(1);
  }
  console.error(`setup: installed ${packages.join(' ')}`);
}
