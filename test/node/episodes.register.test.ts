import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatActionTime, parseAction, parseEpisodeActions } from '../../worker/gpodder/episode-wire.ts';
import { matchEpisode } from '../../src/episode-identity.ts';
import { episodeIndex } from '../../worker/episodes/identity.ts';
import { applyChange, fromPlay, secondOf, toPlay, type EpisodeFields, type FieldChange } from '../../worker/episodes/register.ts';
import { uploadPlay, withSent } from '../../worker/episodes/upload-play.ts';
import type { PendingEpisode, StoredEpisode } from '../../src/schema.ts';

const seed = 1811;
const change = fc.record(
  { position: fc.integer({ min: 0, max: 20_000 }), total: fc.integer({ min: 1, max: 20_000 }), played: fc.boolean() },
  { requiredKeys: [] },
);
// Stamps in ms over a few seconds, so that many share one (the wire's unit, and every comparison's).
const stamp = fc.integer({ min: 0, max: 5_999 });
const stamped = fc.tuple(change, stamp);
const always = () => true;
/** Remote actions folded in answer order, nothing pending: every tie goes to the later one. */
const foldRemote = (changes: [FieldChange, number][]) => changes.reduce<EpisodeFields>((f, [c, at]) => applyChange(f, c, at, always).fields, {});
const KEYS = ['position', 'total', 'played'] as const;
/** A field's value and second: what the rule decides (the ms inside a second are the device's business). */
const seen = (fields: EpisodeFields) => KEYS.map((k) => (fields[k] ? [fields[k].value, secondOf(fields[k].at)] : undefined));

describe('listening state registers', () => {
  it('the newest second wins, in one second the later in the answer; replaying the answer changes nothing', () => {
    fc.assert(
      fc.property(fc.array(stamped, { maxLength: 12 }), (changes) => {
        const folded = foldRemote(changes);
        for (const key of KEYS) {
          const naming = changes.filter(([c]) => c[key] !== undefined);
          const top = Math.max(...naming.map(([, at]) => secondOf(at)));
          const winner = naming.filter(([, at]) => secondOf(at) === top).at(-1);
          expect(folded[key]?.value).toEqual(winner?.[0][key]);
        }
        expect(seen(foldRemote([...changes, ...changes]))).toEqual(seen(folded));
      }),
      { seed, numRuns: 400 },
    );
  });

  it("a pending local value is never overwritten by a remote one of its second or older; a later second's is", () => {
    fc.assert(
      fc.property(change, stamp, change, stamp, (local, localAt, remote, remoteAt) => {
        const mine = applyChange({}, local, localAt, always).fields;
        const pending = new Set(Object.keys(local));
        const merged = applyChange(mine, remote, remoteAt, (key) => !pending.has(key)).fields;
        for (const key of Object.keys(local) as (keyof FieldChange)[]) {
          if (remote[key] !== undefined && secondOf(remoteAt) > secondOf(localAt)) expect(merged[key]).toEqual({ value: remote[key], at: remoteAt });
          else expect(merged[key]).toEqual(mine[key]);
        }
      }),
      { seed, numRuns: 300 },
    );
  });

  it("a local change wins every field from its second or before, never one from a later second (a stamp from the future stands)", () => {
    fc.assert(
      fc.property(change, stamp, change, stamp, (remote, remoteAt, local, localAt) => {
        const held = applyChange({}, remote, remoteAt, always).fields;
        const { fields, changed } = applyChange(held, local, localAt, always);
        for (const key of KEYS) {
          if (local[key] === undefined) expect(fields[key]).toEqual(held[key]);
          else if (held[key] && secondOf(remoteAt) > secondOf(localAt)) {
            expect(fields[key]).toEqual(held[key]);
            expect(changed).not.toContain(key);
          } else expect(fields[key]?.value).toBe(local[key]);
        }
      }),
      { seed, numRuns: 300 },
    );
  });

  it('a play says played when it reached the length (its own, else the last known), not played short of it or without one', () => {
    expect(fromPlay(3600, 3600)).toEqual({ position: 3600, total: 3600, played: true });
    expect(fromPlay(120, 3600)).toEqual({ position: 120, total: 3600, played: false });
    expect(fromPlay(0, undefined)).toEqual({ position: 0, played: false });
    expect(fromPlay(300, undefined)).toEqual({ position: 300, played: false });
    // No total in the action: the last known one decides (a newer play short of the end un-plays).
    expect(fromPlay(300, undefined, 3600)).toEqual({ position: 300, played: false });
    expect(fromPlay(4000, undefined, 3600)).toEqual({ position: 3600, played: true });
    expect(fromPlay(4000, 3600)).toEqual({ position: 3600, total: 3600, played: true });
  });

  it('the uploaded play reads back as the state it carries, with no total when none is known', () => {
    const play = fc.tuple(fc.integer({ min: 0, max: 5000 }), fc.option(fc.integer({ min: 1, max: 5000 }), { nil: undefined }), stamp);
    fc.assert(
      fc.property(fc.array(play, { minLength: 1, maxLength: 8 }), (plays) => {
        // Plays folded as this device makes them (each a local change, as the store records them).
        const fields = plays.reduce<EpisodeFields>((f, [position, total, at]) => applyChange(f, fromPlay(position, total, f.total?.value), at, always).fields, {});
        const sent = toPlay(fields);
        if (fields.total === undefined) expect(sent).not.toHaveProperty('total');
        else expect(sent.position).toBeLessThanOrEqual(sent.total!);
        expect(fromPlay(sent.position, sent.total).played).toBe(fields.played?.value ?? false);
      }),
      { seed, numRuns: 300 },
    );
  });
});

describe('`started` of an upload', () => {
  it('never repeats a (started, position) pair this episode sent, whatever the positions and where each stretch began', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 6 }), fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }), fc.boolean()), { maxLength: 80 }), (steps) => {
        let row: StoredEpisode = { id: 'x', podcast: 'https://f/a', episode: 'https://m/1.mp3', media: 'https://m/1.mp3', total: { value: 6, at: 0 } };
        const sent = new Set<string>();
        for (const [position, from, played] of steps) {
          const pending: PendingEpisode = { version: 1, at: 0, fields: ['position', 'played'], attempts: 0 };
          if (from !== undefined) pending.from = from;
          row = { ...row, position: { value: played ? 6 : position, at: 0 }, played: { value: played, at: 0 }, pending };
          const play = uploadPlay(row);
          expect(play.started).toBeGreaterThanOrEqual(0);
          const pair = `${play.started},${play.position}`;
          expect(sent.has(pair)).toBe(false);
          sent.add(pair);
          row = { ...row, sent: withSent(row.sent, row) };
        }
      }),
      { seed, numRuns: 300 },
    );
  });
});

describe('episode identity', () => {
  it('matches by guid first, then by enclosure URL without its query, within the podcast', () => {
    const rows = [
      { id: 1, podcast: 'https://f/a', episode: 'https://m/1.mp3', media: 'https://m/1.mp3', guid: 'g1' },
      { id: 2, podcast: 'https://f/a', episode: 'https://m/2.mp3?utm=x', media: 'https://m/2.mp3' },
      { id: 3, podcast: 'https://f/b', episode: 'https://m/1.mp3', media: 'https://m/1.mp3', guid: 'g1' },
    ];
    const index = episodeIndex(rows);
    expect(index.find({ podcast: 'https://f/a', episode: 'https://cdn/other.mp3?x=1', guid: 'g1' })?.id).toBe(1);
    expect(index.find({ podcast: 'https://f/a', episode: 'https://m/2.mp3?updated=123#t' })?.id).toBe(2);
    expect(index.find({ podcast: 'https://f/a', episode: 'https://m/1.mp3', guid: 'g-other' })).toBeUndefined();
    expect(index.find({ podcast: 'https://f/c', episode: 'https://m/1.mp3', guid: 'g1' })).toBeUndefined();
    // The page's store holds one podcast's rows as the app sees them (no media key kept): the same rule.
    const page = rows.filter((r) => r.podcast === 'https://f/a').map(({ id, episode, guid }) => (guid ? { id, episode, guid } : { id, episode }));
    expect(matchEpisode({ episode: 'https://cdn/other.mp3?x=1', guid: 'g1' }, page)?.id).toBe(1);
    expect(matchEpisode({ episode: ' https://m/2.mp3?updated=123#t' }, page)?.id).toBe(2);
    expect(matchEpisode({ episode: 'https://m/1.mp3?x' }, page)?.id).toBe(1);
    expect(matchEpisode({ episode: 'https://m/1.mp3', guid: 'g-other' }, page)).toBeUndefined();
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
    // A fraction never out-ranks its second: times are read in whole seconds.
    expect(parseAction({ ...base, action: 'play', timestamp: '2024-11-27T10:00:00.900Z' })?.at).toBe(at);
    // Another kind is not listening state: ignored (null), not counted as skipped (undefined).
    expect(parseAction({ ...base, action: 'download', timestamp: '2024-11-27T10:00:00' })).toBeNull();
  });

  it('an action that does not validate is skipped and counted; only a malformed envelope refuses the answer', () => {
    const good = { podcast: 'https://f/a', episode: 'https://m/1.mp3', action: 'play', timestamp: '2024-11-27T10:00:00', started: 0, position: 10, total: 100 };
    const bad: unknown[] = [
      42,
      null,
      'play',
      [good],
      { ...good, podcast: 5 },
      { ...good, episode: { href: 'https://m/1.mp3' } },
      { ...good, podcast: 'javascript:alert(1)' },
      { ...good, episode: 'file:///etc/passwd' },
      { ...good, timestamp: 'yesterday' },
      { ...good, timestamp: 1732701600 },
      { ...good, timestamp: '10000-01-01T00:00:00' },
      { ...good, position: -1 },
      { ...good, position: -5 },
      { ...good, position: '10' },
      { ...good, position: undefined },
      { ...good, total: -7 },
      { ...good, total: 'long' },
      { ...good, action: undefined },
    ];
    for (const item of bad) expect(parseAction(item), JSON.stringify(item)).toBeUndefined();
    // -1, 0, null or no total: unknown, the position still counts.
    for (const total of [-1, 0, null, undefined]) expect(parseAction({ ...good, total })).toEqual({ podcast: good.podcast, episode: good.episode, at: Date.UTC(2024, 10, 27, 10), position: 10 });
    expect(parseAction({ ...good, podcast: '  https://f/a ', position: 10.6 })).toMatchObject({ podcast: 'https://f/a', position: 11, total: 100 });
    const answer = parseEpisodeActions({ actions: [good, ...bad, { ...good, action: 'delete' }], timestamp: 1_732_701_700 }, 1000);
    expect(answer).toMatchObject({ count: bad.length + 2, skipped: bad.length, timestamp: 1_732_701_700 });
    expect(answer.actions).toHaveLength(1);
    expect(() => parseEpisodeActions({ actions: {}, timestamp: 1 }, 1000)).toThrow(expect.objectContaining({ code: 'bad-response' }));
    expect(() => parseEpisodeActions({ actions: [], timestamp: 'now' }, 1000)).toThrow(expect.objectContaining({ code: 'bad-response' }));
  });

  it('any JSON in: a typed answer or bad-response, never another throw', () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), fc.record({ actions: fc.array(fc.jsonValue(), { maxLength: 5 }), timestamp: fc.oneof(fc.double(), fc.integer(), fc.constant(1e300)) })), (value) => {
        try {
          const parsed = parseEpisodeActions(value, 1000);
          for (const a of parsed.actions) {
            expect(Number.isFinite(a.at)).toBe(true);
            expect(a.at % 1000).toBe(0);
            expect(Number.isInteger(a.position) && a.position! >= 0).toBe(true);
            if (a.total !== undefined) expect(Number.isInteger(a.total) && a.total > 0).toBe(true);
            expect(a.podcast).toMatch(/^https?:/);
            expect(a.episode).toMatch(/^https?:/);
          }
          expect(parsed.actions.length + parsed.skipped).toBeLessThanOrEqual(parsed.count);
          expect(Number.isSafeInteger(parsed.timestamp)).toBe(true);
        } catch (error) {
          expect(error).toMatchObject({ name: 'SyncError', code: 'bad-response' });
        }
      }),
      { seed, numRuns: 500 },
    );
  });

  it('a well-formed envelope is never refused for its items: each is a play, ignored or skipped and counted', () => {
    const url = fc.oneof(fc.webUrl(), fc.constantFrom('javascript:x', 'ftp://h/p', ' https://f/x ', ''), fc.integer());
    const item = fc.oneof(
      fc.jsonValue(),
      fc.record(
        {
          podcast: url,
          episode: url,
          action: fc.constantFrom('play', 'PLAY', 'download', 'new', 'delete', 7),
          timestamp: fc.oneof(fc.date({ noInvalidDate: true }).map((d) => d.toISOString()), fc.string(), fc.integer()),
          position: fc.oneof(fc.integer({ min: -3, max: 40_000_000 }), fc.double(), fc.constant(null)),
          total: fc.oneof(fc.integer({ min: -3, max: 40_000_000 }), fc.double(), fc.constant(null)),
          guid: fc.oneof(fc.string(), fc.integer()),
        },
        { requiredKeys: [] },
      ),
    );
    fc.assert(
      fc.property(fc.array(item, { maxLength: 20 }), (items) => {
        const parsed = parseEpisodeActions({ actions: items, timestamp: 1_732_701_700 }, 1000);
        const ignored = items.filter((i) => parseAction(i) === null).length;
        expect(parsed.actions.length + parsed.skipped + ignored).toBe(items.length);
      }),
      { seed, numRuns: 200 },
    );
  });
});
