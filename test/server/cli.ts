// `npm run server -- --port N [--token T]... [--seed K] [--latency MS] [--max-per-page M]
//   [--deletion-delay MS] [--delete-status 201|202] [--links absolute|relative|none]`
import { parseArgs } from 'node:util';
import { startServer } from './server.ts';
import type { LinkStyle, ServerOptions } from './types.ts';

/** A non-negative integer flag, or exit with a usage error. */
function int(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) {
    console.error(`--${name} must be a non-negative integer, got ${JSON.stringify(text)}`);
    process.exit(2);
  }
  return Number(text);
}

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '8787' },
    token: { type: 'string', multiple: true },
    seed: { type: 'string' },
    latency: { type: 'string' },
    'max-per-page': { type: 'string' },
    'deletion-delay': { type: 'string' },
    'delete-status': { type: 'string' },
    links: { type: 'string' },
  },
});

const deleteStatus = int('delete-status', values['delete-status']);
const links = values.links;
if (deleteStatus !== undefined && deleteStatus !== 201 && deleteStatus !== 202) {
  console.error('--delete-status must be 201 or 202');
  process.exit(2);
}
if (links !== undefined && links !== 'absolute' && links !== 'relative' && links !== 'none') {
  console.error('--links must be absolute, relative or none');
  process.exit(2);
}
const opts: ServerOptions = {
  port: int('port', values.port),
  token: values.token?.flatMap((t) => t.split(',')),
  seed: int('seed', values.seed),
  latencyMs: int('latency', values.latency),
  maxPerPage: int('max-per-page', values['max-per-page']),
  deletionDelayMs: int('deletion-delay', values['deletion-delay']),
  deleteStatus,
  links: links as LinkStyle | undefined,
};

const server = await startServer(opts);
console.log(`listening on ${server.url}`);
const stop = (): void => {
  void server.close().then(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
