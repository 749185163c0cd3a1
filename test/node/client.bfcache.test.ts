// The client on a page that goes into the back/forward cache (src/client.ts onPageHide/onPageShow), in Node with
// a stand-in window and Worker; the browser suite does it for real in all three engines (test/browser/bfcache.test.ts).
import { MessageChannel } from 'node:worker_threads';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSyncClient } from '../../src/index.ts';
import type { ChangeEvent } from '../../src/types.ts';
import { exposeSyncEngine } from '../../worker/index.ts';
import { uniqueDb } from './helpers.ts';

/** Stands in for `new Worker(url)`: an engine over a MessageChannel; records every worker made and ended. */
function stubWorkers() {
  const made: { ended: boolean }[] = [];
  class StubWorker extends EventTarget {
    private readonly port: import('node:worker_threads').MessagePort;
    private readonly record = { ended: false };
    constructor() {
      super();
      const { port1, port2 } = new MessageChannel();
      exposeSyncEngine(port1 as never);
      port2.on('message', (data: unknown) => this.dispatchEvent(new MessageEvent('message', { data })));
      this.port = port2;
      this.terminate = () => {
        this.record.ended = true;
        port2.close();
        port1.close();
      };
      made.push(this.record);
    }
    terminate: () => void;
    postMessage(message: unknown, transfer?: Transferable[]) {
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
function openPage() {
  const page = new EventTarget();
  vi.stubGlobal('window', page);
  const made = stubWorkers();
  const client = createSyncClient({ baseUrl: 'http://127.0.0.1:9/v1', dbName: uniqueDb('bfcache'), pullInterval: 0 });
  return { page, made, client };
}

afterEach(() => void vi.unstubAllGlobals());

describe('the back/forward cache', () => {
  it("ends the worker on a persisted pagehide; the app's own close() in a later pagehide listener resolves", async () => {
    const { page, made, client } = openPage();
    await client.subscriptions();
    let closing: Promise<void> | undefined;
    // Added after the client's own listener, as an app's is: it runs once the worker was ended.
    page.addEventListener('pagehide', () => void (closing = client.close()));
    page.dispatchEvent(pageEvent('pagehide', true));
    expect(made).toEqual([{ ended: true }]);
    await expect(closing).resolves.toBeUndefined();
    await expect(client.subscriptions()).rejects.toMatchObject({ code: 'closed' });
  });

  it('back from the cache, a new worker answers and the app hears "read everything again"', async () => {
    const { page, made, client } = openPage();
    const changes: ChangeEvent[] = [];
    client.on('change', (c) => changes.push(c));
    await client.add('https://example.com/kept.xml');
    page.dispatchEvent(pageEvent('pagehide', true));
    page.dispatchEvent(pageEvent('pageshow', true));
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
    expect(made).toEqual([{ ended: false }]);
    await client.close();
    expect(made).toEqual([{ ended: true }]);
  });
});
