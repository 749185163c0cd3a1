// `npm run bench [-- --quick] [-- --only=pull,incremental,replay,size] [-- --sizes=n10k,n100k] [-- --own-build]
// [-- --markdown]`: prints the figures with the targets, writes the JSON to $BENCH_OUT (or --out=FILE).
import { writeFile } from 'node:fs/promises';
import { FULL_PLAN, QUICK_PLAN, SECTIONS, runBench, type Section, type SizeKey } from './bench.ts';
import { markdownTable, textTable } from './support/table.ts';

const USAGE = `usage: npm run bench -- [--quick] [--only=${SECTIONS.join(',')}] [--sizes=n1k,n10k,n100k] [--own-build] [--markdown] [--out=FILE]
  --quick      tiny sizes, one run each (a smoke run, < 1 minute)
  --only       run only these sections (pull = initialPull + memory + longest task)
  --sizes      initial pull sizes to run
  --own-build  measure size from a fresh Vite build even when dist/ exists
  --markdown   print the table as Markdown too
  --out=FILE   write the JSON there (default: $BENCH_OUT when set)`;

function parse(argv: string[]) {
  const opts = { quick: false, only: undefined as Section[] | undefined, sizes: undefined as SizeKey[] | undefined, ownBuild: false, markdown: false, out: process.env.BENCH_OUT };
  for (const arg of argv) {
    const [name, value] = arg.split('=', 2) as [string, string | undefined];
    if (name === '--quick') opts.quick = true;
    else if (name === '--own-build') opts.ownBuild = true;
    else if (name === '--markdown') opts.markdown = true;
    else if (name === '--out' && value) opts.out = value;
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

const opts = parse(process.argv.slice(2));
const result = await runBench({
  plan: opts.quick ? QUICK_PLAN : FULL_PLAN,
  ...(opts.only ? { sections: opts.only } : {}),
  ...(opts.sizes ? { sizes: opts.sizes } : {}),
  ownBuildForSize: opts.ownBuild,
  log: (line) => console.error(line),
});

const m = result.meta;
console.log('');
console.log(
  `opa-sync bench (${m.mode}${m.mode === 'quick' ? ': tiny sizes, targets not meaningful' : ''}) ${m.startedAt}, commit ${m.commit}` +
    `${m.dirty.length ? ` + uncommitted ${m.dirty.join(', ')}` : ''}`,
);
console.log(`${m.chromium}, Node ${m.node}, ${m.cpus} CPUs, load ${m.loadAvgStart[0]} → ${m.loadAvgEnd[0]}, page size ${m.pageSize}, wall time ${(m.wallMs / 1000).toFixed(1)} s`);
console.log('');
console.log(textTable(result));
if (opts.markdown) {
  console.log('');
  console.log(markdownTable(result));
}
const missed = result.targets.filter((t) => t.ok === false);
console.log('');
console.log(`targets: ${result.targets.filter((t) => t.ok).length} met, ${missed.length} missed${missed.length ? ` (${missed.map((t) => t.key).join(', ')})` : ''}`);
if (opts.out) {
  await writeFile(opts.out, JSON.stringify(result, null, 2) + '\n');
  console.log(`JSON written to ${opts.out}`);
}
