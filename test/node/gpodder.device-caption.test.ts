// The device's caption on the server is the app's: opodsync and mygpo list each device by the caption its
// registration sent (issue 34: every device showed "opa-sync" whatever `device` the app passed).
import { afterEach, describe, expect, it } from 'vitest';
import { startGpodderServer } from '../server/gpodder/server.ts';
import type { GpodderDialect, GpodderServer } from '../server/gpodder/types.ts';
import { createSyncEngine, type SyncEngine } from '../../worker/index.ts';
import { uniqueDb } from './helpers.ts';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close().catch(() => undefined);
});

describe('the device registration', () => {
  for (const dialect of ['opodsync', 'mygpo'] satisfies GpodderDialect[]) {
    it(`${dialect}: two devices of one account show under their own names`, async () => {
      const s: GpodderServer = await startGpodderServer({ port: 0, dialect });
      open.push(s);
      for (const device of ['kitchen-tablet', 'annas.phone']) {
        const e: SyncEngine = createSyncEngine({
          protocol: 'gpodder', baseUrl: s.url, device, dbName: uniqueDb(`caption-${dialect}`), pullInterval: 0,
          auth: { type: 'basic', username: 'alice', password: 'alice-password' },
        });
        open.push(e);
        await e.sync();
      }
      expect(s.devices('alice').map((d) => [d.id, d.caption]).sort()).toEqual([['annas.phone', 'annas.phone'], ['kitchen-tablet', 'kitchen-tablet']]);
    });
  }
});
