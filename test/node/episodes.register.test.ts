import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatActionTime, parseAction, parseEpisodeActions } from '../../worker/gpodder/episode-wire.ts';
import { mediaKey, matchEpisode } from '../../worker/episodes/identity.ts';
import { applyChange, fromPlay, toPlay, type EpisodeFields, type FieldChange } from '../../worker/episodes/register.ts';

const seed = 1811;
const change = fc.record(
  { position: fc.integer({ min: 0, max: 20_000 }), total: fc.integer({ min: 1, max: 20_000 }), played: fc.boolean() },
  { requiredKeys: [] },
);
const stamped = fc.tuple(change, fc.integer({ min: 0, max: 50 }));
const fold = (changes: [FieldChange, number][]) => changes.reduce<EpisodeFields>((f, [c, at]) => applyChange(f, c, at), {});

describe('listening state registers', () => {
  it('converge whatever order the changes arrive in, and a repeated change is a no-op', () => {
    fc.assert(
      fc.property(fc.array(stamped, { maxLength: 12 }), fc.integer(), (changes, shuffleSeed) => {
        const shuffled = [...changes].sort((a, b) => (((JSON.stringify(a).length * 31 + shuffleSeed) % 7) - ((JSON.stringify(b).length * 31 + shuffleSeed) % 7)));
        expect(fold(shuffled)).toEqual(fold(changes));
        expect(fold([...changes, ...changes])).toEqual(fold(changes));
      }),
      { seed, numRuns: 300 },
    );
  });

  it('a newer local value is never overwritten by an older remote one', () => {
    fc.assert(
      fc.property(change, fc.integer({ min: 10, max: 50 }), change, fc.integer({ min: 0, max: 9 }), (local, localAt, remote, remoteAt) => {
        const mine = applyChange({}, local, localAt);
        const merged = applyChange(mine, remote, remoteAt);
        for (const key of Object.keys(local) as (keyof FieldChange)[]) expect(merged[key]).toEqual(mine[key]);
      }),
      { seed, numRuns: 200 },
    );
  });

  it('a play action says played at its end and unplayed at 0', () => {
    expect(fromPlay(3600, 3600)).toEqual({ position: 3600, total: 3600, played: true });
    expect(fromPlay(120, 3600)).toEqual({ position: 120, total: 3600, played: false });
    expect(fromPlay(0, undefined)).toEqual({ position: 0, played: false });
    expect(fromPlay(300, undefined)).toEqual({ position: 300 });
  });

  it('the uploaded play round-trips through what a receiver reads', () => {
    fc.assert(
      fc.property(fc.array(stamped, { minLength: 1, maxLength: 6 }), (changes) => {
        const fields = fold(changes);
        const { position, total } = toPlay(fields);
        expect(total).toBeGreaterThanOrEqual(1);
        expect(position).toBeLessThanOrEqual(total);
        const read = fromPlay(position, total);
        if (fields.played?.value === true) expect(read.played).toBe(true);
        else expect(read.played).toBe(false);
      }),
      { seed, numRuns: 300 },
    );
  });
});

describe('episode identity', () => {
  it('matches by guid first, then by enclosure URL without its query', () => {
    const rows = [
      { id: 1, podcast: 'https://f/a', media: 'https://m/1.mp3', guid: 'g1' },
      { id: 2, podcast: 'https://f/a', media: 'https://m/2.mp3' },
      { id: 3, podcast: 'https://f/b', media: 'https://m/1.mp3', guid: 'g1' },
    ];
    expect(matchEpisode({ podcast: 'https://f/a', media: mediaKey('https://cdn/other.mp3?x=1'), guid: 'g1' }, rows)?.id).toBe(1);
    expect(matchEpisode({ podcast: 'https://f/a', media: mediaKey('https://m/2.mp3?updated=123#t') }, rows)?.id).toBe(2);
    expect(matchEpisode({ podcast: 'https://f/a', media: mediaKey('https://m/1.mp3'), guid: 'g-other' }, rows)).toBeUndefined();
    expect(matchEpisode({ podcast: 'https://f/c', media: 'https://m/1.mp3', guid: 'g1' }, rows)).toBeUndefined();
  });
});

describe('episode actions on the wire', () => {
  it('reads naive, Z, offset and fractional times, any action case', () => {
    const base = { podcast: 'https://f/a', episode: 'https://m/1.mp3', position: 10, total: 100 };
    const at = Date.UTC(2024, 10, 27, 10, 0, 0);
    for (const timestamp of ['2024-11-27T10:00:00', '2024-11-27T10:00:00Z', '2024-11-27T11:00:00+01:00', '2024-11-27T10:00:00.000000', '2024-11-27T10:00:00+00:00']) {
      expect(parseAction({ ...base, action: 'PLAY', timestamp })?.at).toBe(at);
    }
    expect(formatActionTime(at + 999)).toBe('2024-11-27T10:00:00');
    expect(parseAction({ ...base, action: 'download', timestamp: '2024-11-27T10:00:00' })).toBeUndefined();
    expect(parseAction({ ...base, action: 'play', timestamp: '2024-11-27T10:00:00', position: -1 })).toBeUndefined();
  });

  it('any JSON in: a typed answer or bad-response, never another throw', () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), fc.record({ actions: fc.array(fc.jsonValue(), { maxLength: 5 }), timestamp: fc.oneof(fc.double(), fc.integer(), fc.constant(1e300)) })), (value) => {
        try {
          const parsed = parseEpisodeActions(value, 1000);
          for (const a of parsed.actions) {
            expect(Number.isFinite(a.at)).toBe(true);
            expect(a.position).toBeGreaterThanOrEqual(0);
          }
          expect(Number.isSafeInteger(parsed.timestamp)).toBe(true);
        } catch (error) {
          expect(error).toMatchObject({ name: 'SyncError', code: 'bad-response' });
        }
      }),
      { seed, numRuns: 500 },
    );
  });
});
