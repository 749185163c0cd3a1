// The worker side of the page client: a comlink.expose over the engine.
import { expose, type Endpoint } from 'comlink';
import { SyncError, isSyncError } from '../src/errors.ts';
import type { EventSink, LastChanceMessage, WorkerApi, WorkerStartOptions } from '../src/protocol.ts';
import { installErrorTransfer, type SerializedSyncError, type SerializedThrow } from '../src/transfer.ts';
import { createSyncEngine } from './engine.ts';
import type { SyncEngine } from './engine/sync-engine.ts';

/** The engine's methods the page reaches as they are (`start` and `close` are the worker's own). */
const FORWARDED = [
  'setOnline',
  'setVisible',
  'sync',
  'subscriptions',
  'subscription',
  'add',
  'addMany',
  'update',
  'remove',
  'deletion',
  'pending',
  'failed',
  'retry',
  'discard',
  'status',
  'setProgress',
  'markPlayed',
  'episode',
  'episodes',
  'setAuth',
  'clear',
] as const satisfies readonly Exclude<keyof WorkerApi, 'start' | 'close'>[];
// A method added to WorkerApi and not listed above fails to compile here.
type Never<T extends never> = T;
type Unlisted = Never<Exclude<keyof WorkerApi, 'start' | 'close' | (typeof FORWARDED)[number]>>;

/** A plain summary of an error's cause, or undefined when it has none. */
function causeOf(cause: unknown): SerializedSyncError['cause'] {
  if (cause === undefined || cause === null) return undefined;
  const c = cause as { name?: unknown; message?: unknown };
  return { name: typeof c.name === 'string' ? c.name : 'Error', message: typeof c.message === 'string' ? c.message : String(cause) };
}

/** A `SyncError` the engine threw, as it crosses to the page: its own fields (code, status, retryAfter), message, stack, and its cause's name and message. */
const writeError = (thrown: unknown): SerializedThrow | undefined =>
  isSyncError(thrown) ? { isError: true, value: { ...thrown, message: thrown.message, stack: thrown.stack, cause: causeOf(thrown.cause) } satisfies SerializedSyncError } : undefined;

/**
 * Serve the engine to a page's `createSyncClient` over comlink, from a worker of your own
 * (`createSyncClient({ ..., worker: new Worker(new URL('./my-worker.ts', import.meta.url), { type: 'module' }) })`).
 */
export function exposeSyncEngine(endpoint: Endpoint = globalThis as unknown as Endpoint): void {
  installErrorTransfer(writeError);
  let engine: SyncEngine | undefined;
  const current = (): SyncEngine => {
    if (!engine) throw new SyncError('closed', 'the worker was not started');
    return engine;
  };
  const api = {
    async start(options: WorkerStartOptions, sink: EventSink) {
      if (engine) throw new SyncError('invalid', 'the worker is already started');
      engine = createSyncEngine(options);
      // The sink is a comlink proxy: its calls are messages; a closed page must not crash the worker.
      engine.on('change', (payload) => void Promise.resolve(sink('change', payload)).catch(() => undefined));
      engine.on('status', (payload) => void Promise.resolve(sink('status', payload)).catch(() => undefined));
      // On the answers' own channel, posted before the answer of the edit that changed it (see `LastChanceMessage`).
      engine.onLastChance((copy) => endpoint.postMessage({ 'opa-last-chance': copy } satisfies LastChanceMessage));
    },
    close: async () => {
      await engine?.close();
    },
  } as WorkerApi;
  // Every other method goes to the engine as it is (comlink answers each call with a promise either way).
  for (const name of FORWARDED) api[name] = ((...args: unknown[]) => (current()[name] as (...a: unknown[]) => unknown)(...args)) as never;
  expose(api, endpoint);
}
