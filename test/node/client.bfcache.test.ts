// The client on a page that goes into the back/forward cache (src/client.ts onPageHide/onPageShow), in Node with
// a stand-in window and Worker; the browser suite does it for real in all three engines (test/browser/bfcache.test.ts).
import { MessageChannel } from 'node:worker_threads';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSyncClient } from '../../src/index.ts';
import type { ChangeEvent, ClientOptions, SyncSnapshot } from '../../src/types.ts';
import { exposeSyncEngine } from '../../worker/index.ts';
import { TOKEN, engine, server, uniqueDb, until } from './helpers.ts';

/** One stand-in worker: ended or not, the methods the page called on it, and whether its answers are held back. */
interface Made {
  ended: boolean;
  /** Answers are kept from the page while true (a call stays in flight as long as the test wants). */
  held: boolean;
  called: string[];
}

/** Stands in for `new Worker(url)`: an engine over a MessageChannel; records every worker made and ended. */
function stubWorkers() {
  const made: Made[] = [];
  class StubWorker extends EventTarget {
    private readonly port: import('node:worker_threads').MessagePort;
    private readonly record: Made = { ended: false, held: false, called: [] };
    constructor() {
      super();
      const { port1, port2 } = new MessageChannel();
      exposeSyncEngine(port1 as never);
      const record = this.record;
      // A worker ended never answers again, held answers included.
      port2.on('message', (data: unknown) => void (record.held || record.ended || this.dispatchEvent(new MessageEvent('message', { data }))));
      this.port = port2;
      this.terminate = () => {
        this.record.ended = true;
        port2.close();
        port1.close();
      };
      made.push(this.record);
    }
    terminate: () => void;
    postMessage(message: { path?: string[] }, transfer?: Transferable[]) {
      if (message.path?.length) this.record.called.push(message.path.join('.'));
      this.port.postMessage(message, transfer as never);
    }
    start() {
      this.port.start();
    }
  }
  vi.stubGlobal('Worker', StubWorker);
  return made;
}

const pageEvent = (type: 'pagehide' | 'pageshow', persisted: boolean) => Object.assign(new Event(type), { persisted });

/** A stand-in window with a client that spawns its own (stand-in) worker, as an app's page does. */
function openPage(options: Partial<ClientOptions> = {}) {
  const page = new EventTarget();
  vi.stubGlobal('window', page);
  const made = stubWorkers();
  const dbName = uniqueDb('bfcache');
  const client = createSyncClient({ baseUrl: 'http://127.0.0.1:9/v1', dbName, pullInterval: 0, ...options });
  /** Into the cache and (unless told) back. */
  const away = () => page.dispatchEvent(pageEvent('pagehide', true));
  const back = () => page.dispatchEvent(pageEvent('pageshow', true));
  return { page, made, client, dbName, away, back };
}

/** Hold the first worker's answers, make `call`, and return its promise once the worker has it. */
async function inFlight<T>(made: Made[], method: string, call: () => Promise<T>): Promise<{ promise: Promise<T> }> {
  const worker = made[0]!;
  worker.held = true;
  const from = worker.called.length;
  const promise = call();
  // A rejection is looked at by the test, not reported as unhandled meanwhile.
  promise.catch(() => undefined);
  await until(() => worker.called.slice(from).includes(method), 5000, `the worker to get ${method}()`);
  return { promise };
}

/** Let what the page runs after its pagehide task run (its microtasks and anything already due), as a page going into the cache does. */
const frozen = () => new Promise((resolve) => setTimeout(resolve, 0));

afterEach(() => void vi.unstubAllGlobals());

describe('the back/forward cache', () => {
  it("ends the worker on a persisted pagehide; the app's own close() in a later pagehide listener resolves", async () => {
    const { page, made, client, away } = openPage();
    await client.subscriptions();
    let closing: Promise<void> | undefined;
    // Added after the client's own listener, as an app's is: it runs once the worker was ended.
    page.addEventListener('pagehide', () => void (closing = client.close()));
    away();
    expect(made.map((w) => w.ended)).toEqual([true]);
    await expect(closing).resolves.toBeUndefined();
    await expect(client.subscriptions()).rejects.toMatchObject({ code: 'closed' });
  });

  it('back from the cache, a new worker answers and the app hears "read everything again"', async () => {
    const { made, client, away, back } = openPage();
    const changes: ChangeEvent[] = [];
    client.on('change', (c) => changes.push(c));
    await client.add('https://example.com/kept.xml');
    away();
    back();
    expect(made.map((w) => w.ended)).toEqual([true, false]);
    expect(changes.at(-1)).toMatchObject({ everything: true });
    // What the first worker queued is in the database the second one reads.
    expect((await client.subscriptions()).map((s) => s.feedUrl)).toEqual(['https://example.com/kept.xml']);
    await client.close();
    expect(made.map((w) => w.ended)).toEqual([true, true]);
  });

  it('a pagehide that is not persisted (the page unloads) keeps the worker until close()', async () => {
    const { page, made, client } = openPage();
    await client.subscriptions();
    page.dispatchEvent(pageEvent('pagehide', false));
    page.dispatchEvent(pageEvent('pageshow', false));
    expect(made.map((w) => w.ended)).toEqual([false]);
    await client.close();
    expect(made.map((w) => w.ended)).toEqual([true]);
  });

  it("a change the app makes in its own pagehide listener, after the worker ended, waits for the new worker", async () => {
    const { page, client, away, back } = openPage();
    await client.subscriptions();
    let saving: Promise<unknown> | undefined;
    page.addEventListener('pagehide', () => void (saving = client.add('https://example.com/saved-on-the-way-out.xml')));
    away();
    saving!.catch(() => undefined);
    await frozen();
    back();
    await expect(saving).resolves.toMatchObject({ feedUrl: 'https://example.com/saved-on-the-way-out.xml' });
    expect((await client.subscriptions()).map((s) => s.feedUrl)).toEqual(['https://example.com/saved-on-the-way-out.xml']);
    await client.close();
  });

  it('a read in flight when the worker ends is asked again of the new worker', async () => {
    const { made, client, away, back } = openPage();
    await client.add('https://example.com/read-again.xml');
    const { promise } = await inFlight(made, 'subscriptions', () => client.subscriptions());
    away();
    await frozen();
    back();
    expect((await promise).map((s) => s.feedUrl)).toEqual(['https://example.com/read-again.xml']);
    expect(made.map((w) => w.ended)).toEqual([true, false]);
    await client.close();
  });

  it('sync() in flight when the worker ends runs again on the new worker and settles', async () => {
    const s = await server({ seed: 2 });
    const { made, client, away, back } = openPage({ baseUrl: s.url, auth: { type: 'bearer', token: TOKEN } });
    await client.subscriptions();
    const { promise } = await inFlight(made, 'sync', () => client.sync());
    away();
    await frozen();
    back();
    // Its report is the new worker's run (the first one's pull may have committed before it ended).
    await expect(promise).resolves.toMatchObject({ pushed: 0 });
    expect(await client.subscriptions()).toHaveLength(2);
    await client.close();
  });

  it("a change in flight when the worker ends rejects with 'interrupted' at once, saying what the app can do", async () => {
    const { made, client, away } = openPage();
    await client.subscriptions();
    const { promise } = await inFlight(made, 'add', () => client.add('https://example.com/maybe.xml'));
    away();
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ name: 'SyncError', code: 'interrupted' });
    expect((error as Error).message).toMatch(/add\(\).*may or may not.*read .* again/);
    await client.close();
  });

  it('close() settles the calls waiting for a worker that was ended', async () => {
    const { made, client, away } = openPage();
    await client.subscriptions();
    const { promise: read } = await inFlight(made, 'pending', () => client.pending());
    away();
    const later = client.failed();
    later.catch(() => undefined);
    await client.close();
    await expect(read).rejects.toMatchObject({ code: 'closed' });
    await expect(later).rejects.toMatchObject({ code: 'closed' });
  });

  it("the store reading when the worker ends reads again from the new one, and shows what another tab changed meanwhile", async () => {
    const { made, client, dbName, away, back } = openPage();
    await client.subscriptions();
    const worker = made[0]!;
    worker.held = true;
    const from = worker.called.length;
    const store = client.store();
    let latest: SyncSnapshot | undefined;
    store.subscribe((s) => void (latest = s));
    await until(() => worker.called.slice(from).includes('subscriptions'), 5000, "the store's first read to reach the worker");
    away();
    // Another tab adds a feed while this page is in the cache.
    const other = engine({ url: 'http://127.0.0.1:9/v1' }, { dbName });
    await other.add('https://example.com/other-tab.xml');
    back();
    await until(() => latest?.ready && latest.subscriptions.some((s) => s.feedUrl === 'https://example.com/other-tab.xml'), 5000, 'the store to show the other tab’s feed');
    await client.close();
  });

  it('the new worker starts with the credentials of the last setAuth(), not those the client was created with', async () => {
    const s = await server({ seed: 1 });
    const { client, away, back } = openPage({ baseUrl: s.url, auth: { type: 'bearer', token: 'expired' } });
    await client.setAuth({ type: 'bearer', token: TOKEN });
    await expect(client.sync()).resolves.toMatchObject({ pulled: 1 });
    away();
    back();
    await expect(client.sync()).resolves.toBeDefined();
    expect((await client.status()).phase).not.toBe('auth-required');
    await client.close();
  });
});
