// Issue 16, item 19: a storage failure other than quota and "closed" (UnknownError, InvalidStateError,
// DataCloneError) reaches the app as a SyncError `storage` with its cause, in the engine and over comlink,
// and status().lastError no longer blames the server.
import { MessageChannel } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { createSyncClient, isSyncError } from '../../src/index.ts';
import { exposeSyncEngine } from '../../worker/index.ts';
import { TOKEN, engine, server, uniqueDb } from './helpers.ts';

/** Make writes to `dbName` throw a DOMException named `name` until restored (fake-indexeddb, this database only). */
function failWritesWith(dbName: string, name: string): { restore(): void } {
  const proto = (globalThis as unknown as { IDBObjectStore: { prototype: Record<string, (...args: unknown[]) => unknown> } }).IDBObjectStore.prototype;
  const originals = { put: proto.put!, add: proto.add! };
  for (const method of ['put', 'add'] as const) {
    const original = originals[method];
    proto[method] = function (this: { transaction: { db: { name: string } } }, ...args: unknown[]) {
      if (this.transaction.db.name === dbName) throw new DOMException(`the disk said no to ${dbName}`, name);
      return original.apply(this, args);
    };
  }
  return {
    restore() {
      proto.put = originals.put;
      proto.add = originals.add;
    },
  };
}

describe('storage errors', () => {
  for (const name of ['UnknownError', 'InvalidStateError', 'DataCloneError']) {
    it(`${name} in a local edit and in a pull: code storage, the cause kept, nothing written`, async () => {
      const s = await server({ seed: 3 });
      const e = engine(s);
      await e.sync();
      const before = await e.subscriptions();
      const fault = failWritesWith(e.dbName, name);
      try {
        const error = await e.add('https://feeds.example/new.xml').catch((err: unknown) => err);
        expect(isSyncError(error)).toBe(true);
        expect(error).toMatchObject({ code: 'storage' });
        expect((error as Error).cause).toMatchObject({ name: expect.stringMatching(new RegExp(name.replace('Error', ''))) });
        s.foreign.patch(s.state()[0]!.guid, { is_subscribed: false });
        const pulled = await e.sync().catch((err: unknown) => err);
        expect(pulled).toMatchObject({ code: 'storage' });
        // The server answered fine: the status says where the trouble is.
        expect((await e.status()).lastError).toMatchObject({ code: 'storage' });
      } finally {
        fault.restore();
      }
      expect(await e.subscriptions()).toEqual(before);
      expect(await e.pending()).toEqual([]);
      await e.sync();
      expect((await e.subscription(s.state()[0]!.guid))?.isSubscribed).toBe(false);
    });
  }

  it('crosses the comlink boundary with its code and its cause', async () => {
    const s = await server({ seed: 2 });
    const { port1, port2 } = new MessageChannel();
    exposeSyncEngine(port1 as never);
    const worker = Object.assign(port2, {
      terminate: () => {
        port2.close();
        port1.close();
      },
    }) as unknown as Worker;
    const dbName = uniqueDb('storage-client');
    const client = createSyncClient({ baseUrl: s.url, dbName, auth: { type: 'bearer', token: TOKEN }, pullInterval: 0, pushDelay: 0, worker });
    await client.sync();
    const fault = failWritesWith(dbName, 'UnknownError');
    try {
      const error = await client.add('https://feeds.example/new.xml').catch((err: unknown) => err);
      expect(isSyncError(error)).toBe(true);
      expect(error).toMatchObject({ name: 'SyncError', code: 'storage' });
      expect((error as Error).cause).toMatchObject({ name: 'UnknownError', message: expect.stringContaining('the disk said no') });
    } finally {
      fault.restore();
      await client.close();
    }
  });
});
