// The chaos soak: many seeds of the randomised scenario, outside vitest.
//
//   npm run chaos -- --seeds 500            seeds 1..500
//   npm run chaos -- --seeds 200 --from 1000
//   npm run chaos -- --seed 42              replay one seed, with its trace
//   options: --parallel N (default 2), --steps N, --watchdog MS, --refusals / --no-refusals (default: every third seed),
//            --all (do not steer clear of known engine bugs: to check a fix), --allow BUG[,BUG] (only those),
//            --verbose
//
// Prints `chaos: N seeds, F failures`, and for each failure the seed, what broke and the replay command;
// exits 1 when anything failed.
import 'fake-indexeddb/auto';
import { defaultsForSeed, runScenario, ScenarioFailure, type ScenarioOptions, type ScenarioResult } from './scenario.ts';

interface Args {
  seeds: number[];
  parallel: number;
  steps?: number;
  watchdog?: number;
  refusals?: boolean;
  all: boolean;
  allow: string[];
  verbose: boolean;
}

function parse(argv: string[]): Args {
  const args: Args = { seeds: [], parallel: 2, all: false, allow: [], verbose: false };
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
    else if (flag === '--') continue;
    else throw new Error(`unknown option ${flag} (see the header of test/chaos/soak.ts)`);
  }
  args.seeds = single !== undefined ? [single] : Array.from({ length: count }, (_, i) => from + i);
  return args;
}

async function main(): Promise<number> {
  const args = parse(process.argv.slice(2));
  const started = Date.now();
  const failures: ScenarioFailure[] = [];
  const results: ScenarioResult[] = [];
  let next = 0;
  let done = 0;
  const replayOne = args.seeds.length === 1;

  const worker = async () => {
    while (next < args.seeds.length) {
      const seed = args.seeds[next++]!;
      const options: ScenarioOptions = { ...defaultsForSeed(seed) };
      if (args.steps !== undefined) options.steps = args.steps;
      if (args.watchdog !== undefined) options.watchdog = args.watchdog;
      if (args.refusals !== undefined) options.refusals = args.refusals;
      if (args.all) options.avoid = [];
      else if (args.allow.length) options.avoid = (options.avoid ?? []).filter((bug) => !args.allow.includes(bug));
      try {
        const result = await runScenario(options);
        results.push(result);
        if (args.verbose || replayOne) console.log(`seed ${seed}: ok in ${result.ms} ms (${result.intents} intents, ${result.foreign} foreign, ${result.crashes} crashes, ${result.faults} faults, ${result.requests} requests)`);
      } catch (error) {
        const failure = error instanceof ScenarioFailure ? error : new ScenarioFailure(seed, String(error), []);
        failures.push(failure);
        // Failures are rare and timing may not replay them: always print the whole trace.
        console.log(`seed ${seed}: FAILED`);
        console.log(failure.message);
      }
      done++;
      if (!replayOne && done % 50 === 0) console.log(`chaos: ${done}/${args.seeds.length} seeds, ${failures.length} failures so far (${Math.round((Date.now() - started) / 1000)} s)`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(args.parallel, args.seeds.length) }, worker));

  const totals = results.reduce(
    (t, r) => ({ intents: t.intents + r.intents, foreign: t.foreign + r.foreign, crashes: t.crashes + r.crashes, faults: t.faults + r.faults, requests: t.requests + r.requests }),
    { intents: 0, foreign: 0, crashes: 0, faults: 0, requests: 0 },
  );
  const excluded = args.all ? [] : defaultsForSeed(0).avoid.filter((bug) => !args.allow.includes(bug));
  console.log(
    `chaos: ${args.seeds.length} seeds, ${failures.length} failures (${Math.round((Date.now() - started) / 1000)} s; ` +
      `${totals.intents} local changes, ${totals.foreign} foreign changes, ${totals.faults} faults, ${totals.crashes} crashes, ${totals.requests} requests` +
      `${excluded.length ? `; left out as known engine bugs: ${excluded.join(', ')}` : ''})`,
  );
  if (failures.length) console.log(`failed seeds: ${failures.map((f) => f.seed).join(' ')} — replay one with: npm run chaos -- --seed ${failures[0]!.seed}`);
  return failures.length ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
