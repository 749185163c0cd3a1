// The invariant checker must be able to fail: each test breaks one invariant on purpose (without touching the
// engine) and expects the checker to say so. Plus the model's arithmetic.
import { describe, expect, it } from 'vitest';
import { openSyncDatabase } from '../../src/schema.ts';
import type { EpisodeState } from '../../src/types.ts';
import { convergedViolations, playFields, type EpisodeStory, type ModelChange } from '../chaos/episode-model.ts';
import { checkInvariants, cursorViolations, InvariantViolation } from '../chaos/invariants.ts';
import { Model } from '../chaos/model.ts';
import { createTransport } from '../chaos/transport.ts';
import { prng } from '../chaos/prng.ts';
import { engine, server, settle, spyFetch } from './helpers.ts';

async function violations(check: Promise<void>): Promise<string[]> {
  try {
    await check;
    return [];
  } catch (error) {
    if (error instanceof InvariantViolation) return error.violations;
    throw error;
  }
}

describe('chaos checker', () => {
  it('passes a clean run', async () => {
    const s = await server({ seed: 4 });
    const e = engine(s);
    const model = new Model();
    for (const view of s.state()) model.fromServer(view);
    await e.sync();
    const guid = s.state()[0]!.guid;
    await e.update(guid, { isSubscribed: false });
    model.localUpdate(model.byHandle(guid)!, { isSubscribed: false });
    await settle(e);
    expect(await violations(checkInvariants({ engine: e, server: s, model }))).toEqual([]);
  });

  it('catches a change the network swallowed (answered 200 without reaching the server)', async () => {
    const s = await server({ seed: 3 });
    const swallow = spyFetch(async (url, init, real) => {
      if (init?.method === 'PATCH') return new Response('{}', { status: 200 });
      return real(url, init);
    });
    const e = engine(s, { fetch: swallow });
    const model = new Model();
    for (const view of s.state()) model.fromServer(view);
    await e.sync();
    const guid = s.state()[1]!.guid;
    await e.update(guid, { feedUrl: 'https://swallowed.example/feed.xml' });
    model.localUpdate(model.byHandle(guid)!, { feedUrl: 'https://swallowed.example/feed.xml' });
    await settle(e);
    const found = await violations(checkInvariants({ engine: e, server: s, model }));
    // Silent: nothing pending, nothing failed, and the pull overlap even made the view agree with the server.
    // Only the intent log knows the change is gone.
    expect(await e.pending()).toEqual([]);
    expect(await e.failed()).toEqual([]);
    expect(found.some((v) => v.startsWith('lost: feedUrl'))).toBe(true);
  });

  it('catches a server entry no intent explains (a duplicate)', async () => {
    const s = await server({ seed: 2 });
    const e = engine(s);
    const model = new Model();
    for (const view of s.state()) model.fromServer(view);
    const added = await e.add('https://twice.example/feed.xml');
    model.localAdd('https://twice.example/feed.xml', undefined, added.guid);
    await settle(e);
    // A second copy appears that nothing the app or the other device did explains.
    s.foreign.add('https://twice.example/feed.xml?copy');
    await e.sync();
    const found = await violations(checkInvariants({ engine: e, server: s, model }));
    expect(found.some((v) => v.startsWith('lost or doubled:') && v.includes('twice.example/feed.xml?copy'))).toBe(true);
  });

  it('catches a cursor ahead of what the store holds', async () => {
    const s = await server({ seed: 5 });
    const e = engine(s);
    await e.sync();
    await e.close();
    s.foreign.patch(s.state()[0]!.guid, { is_subscribed: false });
    expect(await cursorViolations(e.dbName, s)).toEqual([]);
    // Move the stored cursor past the foreign change without applying it.
    const db = openSyncDatabase(e.dbName);
    await db.meta.put({ key: 'cursor', value: Date.now() + 60_000 });
    db.close();
    const found = await cursorViolations(e.dbName, s);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/but the stored base is/);
  });

  it('catches a request to another origin, and a change left in failed() without cause', async () => {
    const s = await server({ seed: 2 });
    const transport = createTransport({ serverOrigin: s.origin, otherOrigin: 'http://127.0.0.1:9', rng: prng(1) });
    const e = engine(s, { fetch: transport.fetch });
    await e.sync();
    transport.sent.push({ method: 'GET', url: 'http://127.0.0.1:9/v1/subscriptions', origin: 'http://127.0.0.1:9', credentials: true });
    s.failNext(1, 405, { method: 'PATCH' });
    await e.update(s.state()[0]!.guid, { isSubscribed: false });
    await settle(e);
    const found = await violations(checkInvariants({ engine: e, server: s, transport }));
    expect(found.some((v) => v.includes('left the base origin') && v.includes('WITH credentials'))).toBe(true);
    expect(found.some((v) => v.startsWith('failed:') && v.includes('no refusal was expected'))).toBe(true);
  });
});

describe('chaos model', () => {
  const sub = (m: Model) => m.fromServer({ guid: 'g', feed_url: 'https://a.example/f', is_subscribed: true, old_guids: [] });

  it('last local write wins over earlier foreign writes; a later foreign write may win the race', () => {
    const m = new Model();
    const s = sub(m);
    m.foreignPatch(s, { is_subscribed: false });
    m.localUpdate(s, { isSubscribed: true, feedUrl: 'https://b.example/f' });
    expect(m.allowed(s, 'isSubscribed')).toEqual([true]);
    m.foreignPatch(s, { is_subscribed: false });
    m.foreignPatch(s, { new_feed_url: 'https://c.example/f' });
    m.foreignPatch(s, { new_feed_url: 'https://d.example/f' });
    expect(m.allowed(s, 'isSubscribed')?.sort()).toEqual([false, true]);
    // Only the last foreign write after the local one can be final (an earlier one was overwritten either way).
    expect(m.allowed(s, 'feedUrl')?.sort()).toEqual(['https://b.example/f', 'https://d.example/f']);
  });

  it('order per subscription: an older local value is never acceptable', () => {
    const m = new Model();
    const s = sub(m);
    m.localUpdate(s, { isSubscribed: false });
    m.localUpdate(s, { isSubscribed: true });
    expect(m.allowed(s, 'isSubscribed')).toEqual([true]);
  });

  it('a write cut off by a crash widens the set by exactly its value', () => {
    const m = new Model();
    const s = sub(m);
    m.localUpdate(s, { feedUrl: 'https://sure.example/f' });
    m.localUpdate(s, { feedUrl: 'https://maybe.example/f' }, true);
    expect(m.allowed(s, 'feedUrl')?.sort()).toEqual(['https://maybe.example/f', 'https://sure.example/f']);
    m.localRemove(s);
    expect(m.mustBeDeleted(s)).toBe(true);
  });

  it('an excused subscription only needs a value that was written', () => {
    const m = new Model();
    const s = sub(m);
    m.localUpdate(s, { feedUrl: 'https://x.example/f' });
    m.excuse(s);
    expect(m.allowed(s, 'feedUrl')?.sort()).toEqual(['https://a.example/f', 'https://x.example/f']);
  });
});

describe('chaos episode model (the decided rule: whole seconds; in one second a pending local change wins, else the later in the answer)', () => {
  const S = Date.UTC(2026, 0, 1);
  const story = (...changes: ModelChange[]): EpisodeStory => ({ podcast: 'https://f/a.xml', episode: 'https://m/1.mp3', guid: 'g1', stray: false, changes });
  const state = (position: number, pending = false): EpisodeState => ({ podcast: 'https://f/a.xml', episode: 'https://m/1.mp3', guid: 'g1', position, played: false, changedAt: new Date(S).toISOString(), pending });
  const local = (position: number, at: number, rank?: number): ModelChange => ({ source: 'local', fields: { position, played: false }, at, maybe: false, step: 1, ...(rank === undefined ? {} : { rank }) });
  const foreign = (position: number, at: number, rank?: number): ModelChange => ({ source: 'foreign', fields: playFields(position, 3000), at, maybe: false, step: 2, ...(rank === undefined ? {} : { rank }) });
  const wrongPosition = (s: EpisodeStory, held: EpisodeState) => convergedViolations(s, held).filter((v) => / position is /.test(v));

  it("another device's play a fraction of a second after a local change, in its second: the later in the answer wins", () => {
    // The local upload listed after the other device's play: the local value, and only it.
    expect(wrongPosition(story(local(100, S + 300, 1), foreign(900, S, 0)), state(100))).toEqual([]);
    expect(wrongPosition(story(local(100, S + 300, 1), foreign(900, S, 0)), state(900))).toHaveLength(1);
    // Listed before it: the other device's play wins, though its stamp is not later than the local one's.
    expect(wrongPosition(story(local(100, S + 300, 0), foreign(900, S, 1)), state(900))).toEqual([]);
    expect(wrongPosition(story(local(100, S + 300, 0), foreign(900, S, 1)), state(100))).toHaveLength(1);
  });

  it('a local change still pending at the end wins its second; any later second wins over it', () => {
    expect(wrongPosition(story(local(100, S + 300, Infinity), foreign(900, S, 3)), state(100, true))).toEqual([]);
    expect(wrongPosition(story(local(100, S + 300, Infinity), foreign(900, S + 1000, 0)), state(100, true))).toHaveLength(1);
    // A stamp from the future stands: the local change made before it loses.
    expect(wrongPosition(story(foreign(900, S + 5000, 0), local(100, S + 2500, 1)), state(900))).toEqual([]);
  });

  it('a change that may have happened is allowed from the winning second on, not before', () => {
    const maybe = { ...local(50, S - 1000, 1), maybe: true };
    expect(wrongPosition(story(foreign(900, S, 0), maybe), state(50))).toHaveLength(1);
    expect(wrongPosition(story(foreign(900, S, 0), { ...maybe, at: S + 10 }), state(50))).toEqual([]);
  });

  it('a play reads played at the length, not short of it, nor without one', () => {
    expect(playFields(600, 600)).toEqual({ position: 600, total: 600, played: true });
    expect(playFields(0, 600)).toEqual({ position: 0, total: 600, played: false });
    expect(playFields(300, undefined)).toEqual({ position: 300, played: false });
  });
});
