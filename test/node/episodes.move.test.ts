// moveEpisodes (worker/episodes/move.ts) on its own: the rows of a moved feed re-keyed under the new URL, merged
// into rows already there by the identity rule, every move of one transaction made at once.
import { describe, expect, it } from 'vitest';
import { openSyncDatabase, type StoredEpisode } from '../../src/schema.ts';
import { moveEpisodes } from '../../worker/episodes/move.ts';
import { uniqueDb } from './helpers.ts';

const A = 'https://a.example/feed.xml';
const B = 'https://b.example/feed.xml';
const C = 'https://c.example/feed.xml';

function row(podcast: string, n: number, extra: Partial<StoredEpisode> = {}): StoredEpisode {
  const media = `https://media.example/${n}.mp3`;
  return { id: `${podcast}\ng:g${n}`, podcast, episode: media, media, guid: `g${n}`, ...extra };
}

async function moved(rows: StoredEpisode[], moves: [string, string][]) {
  const db = openSyncDatabase(uniqueDb('move'));
  await db.episodes.bulkPut(rows);
  const refs = await db.transaction('rw', db.episodes, () => moveEpisodes(db, new Map(moves)));
  const after = await db.episodes.toArray();
  db.close();
  return { refs, after };
}

describe('moveEpisodes', () => {
  it('a chain and a swap in one transaction move each feed one step', async () => {
    const { after } = await moved([row(A, 1), row(B, 2), row(C, 3)], [
      [A, B],
      [B, A],
      [C, 'https://d.example/feed.xml'],
    ]);
    expect(after.map((r) => [r.guid, r.podcast, r.id.startsWith(`${r.podcast}\n`)]).sort()).toEqual([
      ['g1', B, true],
      ['g2', A, true],
      ['g3', 'https://d.example/feed.xml', true],
    ]);
  });

  it('merges into the row of the same episode: each field newer, one pending change above both versions, the newest enclosure URL', async () => {
    const local = row(A, 1, {
      episode: 'https://media.example/1.mp3?t=new',
      position: { value: 500, at: 2000 },
      pending: { version: 3, at: 2000, fields: ['position'], attempts: 1 },
      due: 50,
      heldAt: 10,
    });
    const there = row(B, 1, {
      id: `${B}\nm:https://media.example/1.mp3`,
      guid: undefined,
      position: { value: 10, at: 1000 },
      total: { value: 1800, at: 1000 },
      pending: { version: 7, at: 1000, fields: ['total'], attempts: 0 },
      due: 80,
      heldAt: 10,
    });
    const { refs, after } = await moved([local, there], [[A, B]]);
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({
      id: there.id,
      podcast: B,
      guid: 'g1',
      episode: 'https://media.example/1.mp3?t=new',
      position: { value: 500, at: 2000 },
      total: { value: 1800, at: 1000 },
      pending: { version: 8, at: 2000, fields: ['total', 'position'], attempts: 1 },
      due: 50,
    });
    expect(refs).toEqual([
      { podcast: A, episode: 'https://media.example/1.mp3?t=new', guid: 'g1' },
      { podcast: B, episode: 'https://media.example/1.mp3?t=new', guid: 'g1' },
    ]);
  });

  it('a pending change the other row holds newer values for is overtaken; two guids are two episodes; a taken key is not overwritten', async () => {
    const local = row(A, 1, { position: { value: 5, at: 1000 }, pending: { version: 1, at: 1000, fields: ['position'], attempts: 0 }, due: 0, heldAt: 0 });
    const newer = row(B, 1, { position: { value: 900, at: 3000 } });
    // Another episode under B whose key is the one A's second episode would get.
    const other = row(B, 9, { id: `${B}\ng:g2` });
    const second = row(A, 2);
    const { after } = await moved([local, newer, other, second], [[A, B]]);
    expect(after).toHaveLength(3);
    const one = after.find((r) => r.guid === 'g1')!;
    expect(one.position).toEqual({ value: 900, at: 3000 });
    expect(one.pending).toBeUndefined();
    expect(one.due).toBeUndefined();
    expect(after.find((r) => r.guid === 'g9')).toEqual(other);
    expect(after.find((r) => r.guid === 'g2')).toMatchObject({ podcast: B, id: `${B}\ng:g2\n2` });
  });
});
