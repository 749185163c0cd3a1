// `npm run server -- [--protocol opa|gpodder|nextcloud] --port N ...`
//   both:          [--seed K] [--latency MS] [--data FILE] [--random-seed N]
//   opa (default): [--token T]... [--max-per-page M] [--deletion-delay MS] [--delete-status 201|202]
//                  [--links absolute|relative|none]
//   gpodder, nextcloud (one server serves both path families):
//                  [--dialect mygpo|opodsync] [--user NAME:PASSWORD]... [--seed-device ID] [--no-cors]
import { parseArgs } from 'node:util';
import { startGpodderServer } from './gpodder/server.ts';
import type { GpodderDialect } from './gpodder/types.ts';
import { startServer } from './server.ts';
import type { LinkStyle, ServerOptions } from './types.ts';

/** Print a usage error and exit with code 2. */
function usage(message: string): never {
  console.error(message);
  process.exit(2);
}

/** A non-negative integer flag, or exit with a usage error. */
function int(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) usage(`--${name} must be a non-negative integer, got ${JSON.stringify(text)}`);
  return Number(text);
}

const { values } = parseArgs({
  options: {
    protocol: { type: 'string', default: 'opa' },
    port: { type: 'string' },
    token: { type: 'string', multiple: true },
    seed: { type: 'string' },
    latency: { type: 'string' },
    'max-per-page': { type: 'string' },
    'deletion-delay': { type: 'string' },
    'delete-status': { type: 'string' },
    links: { type: 'string' },
    dialect: { type: 'string' },
    user: { type: 'string', multiple: true },
    'seed-device': { type: 'string' },
    data: { type: 'string' },
    'random-seed': { type: 'string' },
    'no-cors': { type: 'boolean' },
  },
});

const protocol = values.protocol;
if (protocol !== 'opa' && protocol !== 'gpodder' && protocol !== 'nextcloud') usage('--protocol must be opa, gpodder or nextcloud');
const only = (flags: string[], where: string): void => {
  const given = flags.find((f) => values[f as keyof typeof values] !== undefined);
  if (given) usage(`--${given} applies to --protocol ${where} only`);
};

/** Start the Open Podcast API server. */
async function startOpa(): Promise<{ close(): Promise<void> }> {
  only(['dialect', 'user', 'seed-device', 'no-cors'], 'gpodder or nextcloud');
  const deleteStatus = int('delete-status', values['delete-status']);
  const links = values.links;
  if (deleteStatus !== undefined && deleteStatus !== 201 && deleteStatus !== 202) usage('--delete-status must be 201 or 202');
  if (links !== undefined && links !== 'absolute' && links !== 'relative' && links !== 'none') {
    usage('--links must be absolute, relative or none');
  }
  const opts: ServerOptions = {
    port: int('port', values.port ?? '8787'),
    token: values.token?.flatMap((t) => t.split(',')),
    seed: int('seed', values.seed),
    latencyMs: int('latency', values.latency),
    maxPerPage: int('max-per-page', values['max-per-page']),
    deletionDelayMs: int('deletion-delay', values['deletion-delay']),
    deleteStatus,
    links: links as LinkStyle | undefined,
    dataFile: values.data,
    randomSeed: int('random-seed', values['random-seed']),
  };
  const server = await startServer(opts);
  console.log(`listening on ${server.url}`);
  if (opts.dataFile) console.log(`state kept in ${opts.dataFile}`);
  return server;
}

/** Start the gPodder / Nextcloud server. */
async function startGpodder(): Promise<{ close(): Promise<void> }> {
  only(['token', 'max-per-page', 'deletion-delay', 'delete-status', 'links'], 'opa');
  const dialect = values.dialect ?? 'mygpo';
  if (dialect !== 'mygpo' && dialect !== 'opodsync') usage('--dialect must be mygpo or opodsync');
  let users: Record<string, string> | undefined;
  for (const pair of values.user ?? []) {
    const colon = pair.indexOf(':');
    if (colon < 1) usage(`--user must be NAME:PASSWORD, got ${JSON.stringify(pair)}`);
    users = { ...users, [pair.slice(0, colon)]: pair.slice(colon + 1) };
  }
  const server = await startGpodderServer({
    port: int('port', values.port ?? '8085'),
    dialect: dialect as GpodderDialect,
    users,
    seed: int('seed', values.seed),
    latencyMs: int('latency', values.latency),
    seedDevice: values['seed-device'],
    dataFile: values.data,
    randomSeed: int('random-seed', values['random-seed']),
    cors: !values['no-cors'],
  });
  console.log(`listening on ${server.url}`);
  console.log(`protocol ${protocol}, ${dialect} dialect: /api/2/... and /index.php/apps/gpoddersync/...`);
  for (const [name, password] of Object.entries(server.users)) console.log(`user ${name} password ${password}`);
  if (values.data) console.log(`state kept in ${values.data}`);
  return server;
}

const server = protocol === 'opa' ? await startOpa() : await startGpodder();
const stop = (): void => {
  void server.close().then(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
