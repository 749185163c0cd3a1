// The page client and the worker side over a real MessageChannel (the browser suite does it with a real Worker).
import { MessageChannel } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { createSyncClient, isSyncError } from '../../src/index.ts';
import { exposeSyncEngine } from '../../worker/index.ts';
import { TOKEN, server, uniqueDb, until } from './helpers.ts';


describe('client over comlink', () => {
  it('runs the full method set through exposeSyncEngine, with errors keeping code and status', async () => {
    const s = await server({ seed: 3 });
    const { port1, port2 } = new MessageChannel();
    exposeSyncEngine(port1 as never);
    let terminated = false;
    const worker = Object.assign(port2, {
      terminate: () => {
        terminated = true;
        port2.close();
        port1.close();
      },
    }) as unknown as Worker;
    const client = createSyncClient({ baseUrl: s.url, dbName: uniqueDb('client'), auth: { type: 'bearer', token: TOKEN }, pullInterval: 0, pushDelay: 0, worker });
    const changes: string[] = [];
    client.on('change', (c) => changes.push(...c.guids));
    const report = await client.sync();
    expect(report.pulled).toBe(3);
    await until(() => changes.length >= 3, 2000, 'change events through the proxy');
    const [first] = await client.subscriptions();
    const view = await client.update(first!.guid, { isSubscribed: false });
    expect(view).toMatchObject({ guid: first!.guid, isSubscribed: false, pending: true });
    await until(() => s.entry(first!.guid)?.is_subscribed === false, 3000, 'the push');
    const error = await client.update(first!.guid, { feedUrl: 'gopher://old' }).catch((e: unknown) => e);
    expect(isSyncError(error)).toBe(true);
    expect(error).toMatchObject({ name: 'SyncError', code: 'invalid' });
    const notFound = await client.deletion(424242).catch((e: unknown) => e);
    expect(notFound).toMatchObject({ code: 'not-found', status: 404 });
    expect((await client.status()).leader).toBe(true);
    await client.close();
    expect(terminated).toBe(true);
    await expect(client.sync()).rejects.toMatchObject({ code: 'closed' });
  });
});
