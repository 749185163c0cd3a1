// The chaos soak: many seeds of the randomised scenario, outside vitest.
//
//   npm run chaos -- --seeds 500            seeds 1..500
//   npm run chaos -- --seeds 200 --from 1000
//   npm run chaos -- --seed 42              replay one seed, with its trace
//   npm run chaos -- --protocol gpodder --seeds 500    the gPodder scenario (gpodder-scenario.ts) instead
//   options: --parallel N child processes (default: the number of cores), --steps N, --watchdog MS,
//            --refusals / --no-refusals (default: every third seed),
//            --all (do not steer clear of known engine bugs: to check a fix), --allow BUG[,BUG] (only those),
//            --verbose,
//            --faults SPEC   the hostile fault families (test/chaos/hostile.ts): `hostile` (all: the default),
//                            `polite` (none: only the faults of a well-behaved world), a comma list of names
//                            (clock,empty-2xx,html-2xx,server-urls,retry-after,redirect,upload-413,
//                            timestamp-regress,other-tab,set-auth,dead-server,slow-body,episode-cap,step-removes),
//                            or `hostile,-clock` to leave one out
//            --families SPEC the soak families of issues 31 and 33 (test/chaos/families.ts) a seed may draw: `all`
//                            (the default), `none`, or a comma list (follower,lost-answer,last-copy,bulk)
//
// Prints `chaos: N seeds, F failures`, and for each failure the seed, what broke and the replay command;
// exits 1 when anything failed. Scenarios run in simulated time, so a seed's trace is the same on any
// machine under any load: the replay command reproduces a failure exactly. Seeds are shared out among child
// processes, one scenario at a time in each (its own fake-indexeddb, its own event loop).
import 'fake-indexeddb/auto';
import { fork, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { GpodderScenarioFailure, runGpodderScenario } from './gpodder-scenario.ts';
import { ALL_HOSTILE, parseFaults, type HostileFault } from './hostile.ts';
import { FAMILIES, type Family } from './families.ts';
import { defaultsForSeed, runScenario, ScenarioFailure, type ScenarioOptions, type ScenarioResult } from './scenario.ts';

interface Args {
  protocol: 'opa' | 'gpodder';
  seeds: number[];
  parallel: number;
  steps?: number;
  watchdog?: number;
  refusals?: boolean;
  all: boolean;
  allow: string[];
  verbose: boolean;
  faults: HostileFault[];
  families: Family[];
}

function parse(argv: string[]): Args {
  const args: Args = { protocol: 'opa', seeds: [], parallel: availableParallelism(), all: false, allow: [], verbose: false, faults: ALL_HOSTILE, families: [...FAMILIES] };
  let count = 50;
  let from = 1;
  let single: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = () => {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v < 0) throw new Error(`${flag} needs a whole number`);
      return v;
    };
    if (flag === '--seeds') count = value();
    else if (flag === '--from') from = value();
    else if (flag === '--seed') single = value();
    else if (flag === '--parallel') args.parallel = Math.max(1, value());
    else if (flag === '--steps') args.steps = value();
    else if (flag === '--watchdog') args.watchdog = value();
    else if (flag === '--refusals') args.refusals = true;
    else if (flag === '--no-refusals') args.refusals = false;
    else if (flag === '--all') args.all = true;
    else if (flag === '--allow') args.allow.push(...String(argv[++i] ?? '').split(',').filter(Boolean));
    else if (flag === '--verbose') args.verbose = true;
    else if (flag === '--faults') args.faults = parseFaults(String(argv[++i] ?? ''));
    else if (flag === '--families') args.families = parseFamilies(String(argv[++i] ?? ''));
    else if (flag === '--protocol') {
      const p = argv[++i];
      if (p !== 'opa' && p !== 'gpodder') throw new Error('--protocol takes opa or gpodder');
      args.protocol = p;
    }
    else if (flag === '--') continue;
    else throw new Error(`unknown option ${flag} (see the header of test/chaos/soak.ts)`);
  }
  args.seeds = single !== undefined ? [single] : Array.from({ length: count }, (_, i) => from + i);
  return args;
}

/** `all`, `none`, or a comma list of family names. */
function parseFamilies(spec: string): Family[] {
  if (spec === 'all') return [...FAMILIES];
  if (spec === 'none') return [];
  const names = spec.split(',').filter(Boolean);
  for (const name of names) if (!FAMILIES.includes(name as Family)) throw new Error(`unknown family ${name} (one of ${FAMILIES.join(', ')})`);
  return names as Family[];
}

/** What a child sends back for one seed. */
type Outcome = { seed: number; ok: true; result: ScenarioResult } | { seed: number; ok: false; reason: string; trace: string[] };

/** The options a seed runs with under these arguments. */
function optionsFor(seed: number, args: Args): ScenarioOptions & { protocol: Args['protocol'] } {
  const options: ScenarioOptions = { ...defaultsForSeed(seed) };
  if (args.steps !== undefined) options.steps = args.steps;
  if (args.watchdog !== undefined) options.watchdog = args.watchdog;
  if (args.refusals !== undefined) options.refusals = args.refusals;
  options.faults = args.faults;
  options.families = args.families;
  if (args.all) options.avoid = [];
  else if (args.allow.length) options.avoid = (options.avoid ?? []).filter((bug) => !args.allow.includes(bug));
  return { ...options, protocol: args.protocol };
}

/** Run one seed here, as an outcome. */
async function runSeed(options: ScenarioOptions & { protocol: Args['protocol'] }): Promise<Outcome> {
  try {
    if (options.protocol === 'gpodder') {
      const r = await runGpodderScenario(options.seed, options.steps, options.faults, options.families, options.avoid);
      const result: ScenarioResult = { seed: r.seed, ms: 0, intents: r.intents, foreign: r.foreign, syncs: 0, crashes: r.crashes, requests: r.requests, faults: r.faults, failedKept: 0, transport: {}, trace: r.trace };
      return { seed: options.seed, ok: true, result };
    }
    return { seed: options.seed, ok: true, result: await runScenario(options) };
  } catch (error) {
    const failure = error instanceof ScenarioFailure || error instanceof GpodderScenarioFailure ? error : new ScenarioFailure(options.seed, String(error), []);
    return { seed: options.seed, ok: false, reason: failure.message, trace: failure.trace };
  }
}

/** A child process's loop: run each seed it is sent, answer with the outcome. */
function child(): void {
  process.on('message', (message: (ScenarioOptions & { protocol: Args['protocol'] }) | 'exit') => {
    if (message === 'exit') process.exit(0);
    void runSeed(message).then((outcome) => process.send!(outcome));
  });
}

async function main(): Promise<number> {
  const args = parse(process.argv.slice(2));
  const started = Date.now();
  const failures: Extract<Outcome, { ok: false }>[] = [];
  const results: ScenarioResult[] = [];
  let next = 0;
  let done = 0;
  const replayOne = args.seeds.length === 1;

  const record = (outcome: Outcome) => {
    if (outcome.ok) {
      results.push(outcome.result);
      const r = outcome.result;
      if (args.verbose || replayOne) console.log(`seed ${r.seed}: ok in ${r.ms} ms (${r.intents} intents, ${r.foreign} foreign, ${r.crashes} crashes, ${r.faults} faults, ${r.requests} requests)`);
      if (replayOne) console.log(r.trace.join('\n'));
    } else {
      failures.push(outcome);
      console.log(`seed ${outcome.seed}: FAILED`);
      console.log(outcome.reason);
    }
    done++;
    if (!replayOne && done % 50 === 0) console.log(`chaos: ${done}/${args.seeds.length} seeds, ${failures.length} failures so far (${Math.round((Date.now() - started) / 1000)} s)`);
  };

  const lanes = Math.min(args.parallel, args.seeds.length);
  if (lanes <= 1) {
    for (const seed of args.seeds) record(await runSeed(optionsFor(seed, args)));
  } else {
    const self = fileURLToPath(import.meta.url);
    const lane = (proc: ChildProcess) =>
      new Promise<void>((resolve, reject) => {
        const feed = () => {
          if (next >= args.seeds.length) {
            proc.send('exit');
            return resolve();
          }
          proc.send(optionsFor(args.seeds[next++]!, args));
        };
        proc.on('message', (outcome: Outcome) => {
          record(outcome);
          feed();
        });
        proc.on('exit', (code) => (next < args.seeds.length || code ? reject(new Error(`a soak process exited with ${code}`)) : resolve()));
        feed();
      });
    await Promise.all(Array.from({ length: lanes }, () => lane(fork(self, ['--child'], { execArgv: process.execArgv }))));
  }

  const totals = results.reduce(
    (t, r) => ({ intents: t.intents + r.intents, foreign: t.foreign + r.foreign, crashes: t.crashes + r.crashes, faults: t.faults + r.faults, requests: t.requests + r.requests }),
    { intents: 0, foreign: 0, crashes: 0, faults: 0, requests: 0 },
  );
  const excluded = args.all ? [] : defaultsForSeed(0).avoid.filter((bug) => !args.allow.includes(bug));
  console.log(
    `chaos${args.protocol === 'gpodder' ? ' (gpodder)' : ''}: ${args.seeds.length} seeds, ${failures.length} failures (${Math.round((Date.now() - started) / 1000)} s; ` +
      `${totals.intents} local changes, ${totals.foreign} foreign changes, ${totals.faults} faults, ${totals.crashes} crashes, ${totals.requests} requests` +
      `${excluded.length ? `; left out as known engine bugs: ${excluded.join(', ')}` : ''}; hostile faults: ${args.faults.length ? args.faults.join(', ') : 'none'})`,
  );
  const again = args.protocol === 'gpodder' ? '--protocol gpodder ' : '';
  const faults =
    (args.faults.join(',') === ALL_HOSTILE.join(',') ? '' : `--faults ${args.faults.join(',') || 'polite'} `) +
    (args.families.join(',') === FAMILIES.join(',') ? '' : `--families ${args.families.join(',') || 'none'} `);
  if (failures.length) console.log(`failed seeds: ${failures.map((f) => f.seed).join(' ')} — replay one with: npm run chaos -- ${again}${faults}--seed ${failures[0]!.seed}`);
  return failures.length ? 1 : 0;
}

if (process.argv.includes('--child')) child();
else {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(2);
    },
  );
}
