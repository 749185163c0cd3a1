// `npm run bench [-- --browser=chromium|firefox|webkit|all] [-- --quick] [-- --only=pull,incremental,open,replay,import,dead,episodes,store,scale,size]
// [-- --sizes=n10k,n100k] [-- --own-build] [-- --markdown]`: prints the figures with the targets per engine (and
// a table with a column per engine when there are several), writes the JSON to $BENCH_OUT (or --out=FILE).
import { writeFile } from 'node:fs/promises';
import { parseEngines, type EngineName } from '../support/engines.ts';
import { FULL_PLAN, QUICK_PLAN, SECTIONS, runBench, type BenchPlan, type BenchResult, type Section, type SizeKey } from './bench.ts';
import { engineTable, markdownTable, textTable } from './support/table.ts';

const USAGE = `usage: npm run bench -- [--browser=chromium|firefox|webkit|all] [--quick] [--only=${SECTIONS.join(',')}] [--sizes=n1k,n10k,n100k] [--runs=N] [--own-build] [--markdown] [--out=FILE]
  --browser    engine(s) to measure, comma-separated or all (default chromium); size is measured once
  --quick      tiny sizes, one run each (a smoke run, < 1 minute)
  --only       run only these sections (pull = initialPull + memory + longest task)
  --sizes      initial pull sizes to run
  --runs=N     runs per initial pull size (default 7 at 1k, 5 at 10k, 3 at 100k)
  --own-build  measure size from a fresh Vite build even when dist/ exists
  --markdown   print the table as Markdown too
  --out=FILE   write the JSON there (default: $BENCH_OUT when set)`;

// Leaving the page (test/bench/leaving.ts): close → on-server latency and the share of closes delivered.
if (process.argv.includes('--leaving')) await (await import('./leaving.ts')).runLeavingBench(process.argv.slice(2));
// After every page is closed (test/bench/background.ts): the service worker's delivery, offline and server down.
if (process.argv.includes('--background')) await (await import('./background.ts')).runBackgroundBench(process.argv.slice(2));

function parse(argv: string[]) {
  const opts = { browsers: ['chromium'] as EngineName[], quick: false, only: undefined as Section[] | undefined, sizes: undefined as SizeKey[] | undefined, runs: undefined as number | undefined, ownBuild: false, markdown: false, out: process.env.BENCH_OUT };
  for (const arg of argv) {
    const [name, value] = arg.split('=', 2) as [string, string | undefined];
    if (name === '--browser' && value) opts.browsers = parseEngines(value);
    else if (name === '--quick') opts.quick = true;
    else if (name === '--own-build') opts.ownBuild = true;
    else if (name === '--markdown') opts.markdown = true;
    else if (name === '--out' && value) opts.out = value;
    else if (name === '--runs' && value && Number.isInteger(Number(value)) && Number(value) > 0) opts.runs = Number(value);
    else if (name === '--only' && value) {
      const list = value.split(',') as Section[];
      const bad = list.filter((s) => !SECTIONS.includes(s));
      if (bad.length) throw new Error(`unknown section(s) ${bad.join(', ')}\n${USAGE}`);
      opts.only = list;
    } else if (name === '--sizes' && value) {
      const list = value.split(',') as SizeKey[];
      const bad = list.filter((s) => !['n1k', 'n10k', 'n100k'].includes(s));
      if (bad.length) throw new Error(`unknown size(s) ${bad.join(', ')}\n${USAGE}`);
      opts.sizes = list;
    } else if (name === '--help' || name === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else throw new Error(`unknown argument ${arg}\n${USAGE}`);
  }
  return opts;
}

/** The plan with `runs` initial pulls per size, when given. */
function withRuns(plan: BenchPlan, runs: number | undefined): BenchPlan {
  return runs === undefined ? plan : { ...plan, initial: plan.initial.map((s) => ({ ...s, runs })) };
}

const opts = parse(process.argv.slice(2));
const results: BenchResult[] = [];
const failed: EngineName[] = [];
for (const [i, browser] of opts.browsers.entries()) {
  // Bundle size does not depend on the engine: measured with the first one only.
  const sections = (opts.only ?? SECTIONS).filter((s) => i === 0 || s !== 'size');
  console.error(`== ${browser} ==`);
  let result: BenchResult;
  try {
    result = await runBench({
      plan: withRuns(opts.quick ? QUICK_PLAN : FULL_PLAN, opts.runs),
      browser,
      sections,
      ...(opts.sizes ? { sizes: opts.sizes } : {}),
      ownBuildForSize: opts.ownBuild,
      log: (line) => console.error(line),
    });
  } catch (error) {
    // One engine failing must not lose the others' figures: report it, go on, exit non-zero at the end.
    console.error(`bench in ${browser} failed: ${(error as Error).stack ?? String(error)}`);
    failed.push(browser);
    continue;
  }
  results.push(result);
  if (result.meta.stuckDeletes.length) console.error(`${browser}: ${result.meta.stuckDeletes.length} database deletion(s) never finished`);

  const m = result.meta;
  console.log('');
  console.log(
    `opa-sync bench in ${browser} (${m.mode}${m.mode === 'quick' ? ': tiny sizes, targets not meaningful' : ''}) ${m.startedAt}, commit ${m.commit}` +
      `${m.dirty.length ? ` + uncommitted ${m.dirty.join(', ')}` : ''}`,
  );
  console.log(
    `${m.browserVersion} (IndexedDB ${m.onDisk ? 'on disk' : 'in memory'}), Node ${m.node}, ${m.cpus} CPUs, load ${m.loadAvgStart[0]} → ${m.loadAvgEnd[0]}, ` +
      `page size ${m.pageSize}, wall time ${(m.wallMs / 1000).toFixed(1)} s`,
  );
  console.log('');
  console.log(textTable(result));
  if (opts.markdown) {
    console.log('');
    console.log(markdownTable(result));
  }
  const missed = result.targets.filter((t) => t.ok === false);
  console.log('');
  console.log(`targets: ${result.targets.filter((t) => t.ok).length} met, ${missed.length} missed${missed.length ? ` (${missed.map((t) => t.key).join(', ')})` : ''}`);
}
if (results.length > 1) {
  console.log('');
  console.log(engineTable(results));
}
if (opts.out) {
  await writeFile(opts.out, JSON.stringify(results.length === 1 ? results[0] : { runs: results }, null, 2) + '\n');
  console.log(`JSON written to ${opts.out}`);
}
if (failed.length) {
  console.error(`bench failed in ${failed.join(', ')}`);
  process.exit(1);
}
