// One episode, one row: `store({ podcast })` finds the row a change names by the engine's own identity rule
// (src/episode-identity.ts: the RSS guid, then the enclosure URL without its query), so an enclosure URL whose
// tracking query changed is the same row in the store as in `episodes({ podcast })`.
import { describe, expect, it } from 'vitest';
import { createStores } from '../../src/store.ts';
import type { SyncSnapshot } from '../../src/types.ts';
import { startGpodderServer } from '../server/gpodder/server.ts';
import { engine, until } from './helpers.ts';

const P = 'https://p.example/feed';
const gpodder = { protocol: 'nextcloud', auth: { type: 'basic', username: 'alice', password: 'alice-password' }, device: 'web-player' } as const;

/** An engine (offline: nothing goes out) on a gPodder server, and its store of P's episodes. */
async function open() {
  const g = await startGpodderServer({ port: 0, dialect: 'opodsync' });
  const e = engine(g, gpodder);
  e.setOnline(false);
  const store = createStores(e)(P);
  await until(() => store.getSnapshot().ready, 5000, 'ready');
  /** The snapshot once it shows `position` for some row, checked against what the engine lists. */
  const showing = async (position: number): Promise<SyncSnapshot> => {
    const snapshot = await until(() => (store.getSnapshot().episodes!.some((s) => s.position === position) ? store.getSnapshot() : undefined), 5000, `position ${position}`);
    expect(snapshot.episodes).toEqual(await e.episodes({ podcast: P }));
    return snapshot;
  };
  return { g, e, showing };
}

describe('store({ podcast }): one episode, one row', () => {
  it("an enclosure URL whose tracking query changed is the same row (no guid)", async () => {
    const { g, e, showing } = await open();
    try {
      await e.setProgress({ podcast: P, episode: `${P}/ep-1.mp3?utm=a` }, { position: 10, total: 300 });
      await showing(10);
      await e.setProgress({ podcast: P, episode: `${P}/ep-1.mp3?utm=b` }, { position: 20 });
      const after = await showing(20);
      expect(after.episodes).toHaveLength(1);
      expect(after.episodes![0]).toMatchObject({ episode: `${P}/ep-1.mp3?utm=b`, position: 20 });
    } finally {
      await g.close();
    }
  });

  it('a guid learned with a new tracking query is the same row, and a ref without a guid names it then by its URL', async () => {
    const { g, e, showing } = await open();
    try {
      await e.setProgress({ podcast: P, episode: `${P}/ep-2.mp3?utm=a` }, { position: 10, total: 300 });
      await e.setProgress({ podcast: P, episode: `${P}/ep-3.mp3`, guid: 'three' }, { position: 5, total: 300 });
      await showing(5);
      await e.setProgress({ podcast: P, episode: `${P}/ep-2.mp3?utm=b`, guid: 'two' }, { position: 30 });
      expect((await showing(30)).episodes!.map((s) => s.guid)).toEqual(['two', 'three']);
      await e.setProgress({ podcast: P, episode: `${P}/ep-2.mp3?utm=c` }, { position: 40 });
      expect((await showing(40)).episodes!.map((s) => s.guid)).toEqual(['two', 'three']);
    } finally {
      await g.close();
    }
  });
});
