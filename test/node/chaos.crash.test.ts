// Crash points: a fixed queue of local changes (one of each kind) and a foreign change, then the engine is killed
// around each request of the sync that delivers them (pull pages, POST, PATCH, DELETE, deletion polls): before
// the request leaves, after the server applied it but before the engine read the answer, and right after the
// answer was handed over. A new engine opens the same database; the store it finds must already satisfy the
// cursor invariant, and after it settles every invariant holds (a replayed request is fine: once in effect).
import { describe, expect, it } from 'vitest';
import type { SyncEngine } from "../../worker/index.ts";
import { checkInvariants, cursorViolations } from '../chaos/invariants.ts';
import { Model } from '../chaos/model.ts';
import { prng } from '../chaos/prng.ts';
import { createTransport, type CrashPlan } from '../chaos/transport.ts';
import { engine, server, settle, uniqueDb } from './helpers.ts';

type Phase = CrashPlan['phase'];

interface Run {
  /** Requests the delivering sync made (in a run without a crash). */
  requests: string[];
  /** The request the engine was killed around (undefined: the run never got that far). */
  crashedAt: string | undefined;
}

/** `METHOD /v1/path` with ids replaced, so requests group by kind. */
const kind = (request: string) => request.replace(/\/subscriptions\/.+$/, '/subscriptions/{guid}').replace(/\/deletions\/\d+$/, '/deletions/{id}');

/** Queue the script's changes, sync with a crash planned, reopen, settle, check. */
async function crashRun(plan?: { at: number; phase: Phase }): Promise<Run> {
  const s = await server({ seed: 6, deletionDelayMs: 20 });
  const transport = createTransport({ serverOrigin: s.origin, otherOrigin: 'http://127.0.0.1:9', rng: prng(7) });
  const dbName = uniqueDb('crash');
  const open = () => engine(s, { dbName, fetch: transport.fetch, pageSize: 2, timeout: 2000 });
  let e = open();
  const model = new Model();
  for (const view of s.state()) model.fromServer(view);
  await e.sync();

  // The app's changes, made offline so they all wait for the sync under test.
  e.setOnline(false);
  const [a, b, c, d, f] = s.state();
  await e.update(a!.guid, { isSubscribed: !a!.is_subscribed });
  model.localUpdate(model.byHandle(a!.guid)!, { isSubscribed: !a!.is_subscribed });
  await e.update(b!.guid, { feedUrl: 'https://crash.example/b.xml' });
  model.localUpdate(model.byHandle(b!.guid)!, { feedUrl: 'https://crash.example/b.xml' });
  await e.update(c!.guid, { guid: 'crash-renamed' });
  model.localUpdate(model.byHandle(c!.guid)!, { guid: 'crash-renamed' });
  await e.remove(d!.guid);
  model.localRemove(model.byHandle(d!.guid)!);
  const added = await e.add('https://crash.example/new.xml');
  const sub = model.localAdd('https://crash.example/new.xml', undefined, added.guid);
  await e.update(added.guid, { isSubscribed: false });
  model.localUpdate(sub, { isSubscribed: false });
  const given = await e.add('https://crash.example/given.xml', { guid: 'crash-given' });
  model.localAdd('https://crash.example/given.xml', 'crash-given', given.guid);
  // Another device, meanwhile.
  s.foreign.patch(f!.guid, { is_subscribed: false });
  model.foreignPatch(model.byHandle(f!.guid)!, { is_subscribed: false });
  model.foreignAdd(s.foreign.add('https://crash.example/foreign.xml'));

  const before = transport.sent.length;
  const dying = e;
  if (plan) transport.crash = { ...plan, match: () => transport.sent.length > before, kill: () => void dying.close() };
  e.setOnline(true);
  await settleOrDie(e);
  const requests = transport.sent.slice(before).map((r) => `${r.method} ${new URL(r.url).pathname}`);
  const crashedAt = transport.crashedAt;
  transport.crash = undefined;
  await e.close();

  // The store as the killed worker left it: the cursor never ahead of what it holds.
  expect(await cursorViolations(dbName, s)).toEqual([]);

  e = open();
  await settle(e, 15_000);
  await checkInvariants({ engine: e, server: s, model, transport });
  return { requests, crashedAt };
}

/** Deliver everything, or stop when the engine was killed (its sync() then rejects with `closed`). */
async function settleOrDie(e: SyncEngine): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const result = await e.sync().then(
      () => 'ok',
      (error: { code?: string }) => error.code ?? 'error',
    );
    if (result === 'closed') return;
    if ((await e.pending().catch(() => [])).length === 0 && result === 'ok') return;
    await new Promise((r) => setTimeout(r, 15));
  }
}

describe('chaos: crash points', () => {
  it('killed between the pages of the very first pull: the next engine starts over and the store is complete', async () => {
    for (const phase of ['after', 'returned'] as const) {
      for (let at = 1; at <= 5; at++) {
        const s = await server({ seed: 9 });
        const transport = createTransport({ serverOrigin: s.origin, otherOrigin: 'http://127.0.0.1:9', rng: prng(3) });
        const dbName = uniqueDb('first-pull');
        const first = engine(s, { dbName, fetch: transport.fetch, pageSize: 2 });
        transport.crash = { at, phase, kill: () => void first.close() };
        await first.sync().catch(() => undefined);
        await first.close();
        expect(transport.stats[`crash-${phase}`]).toBe(1);
        // Killed mid-drain: some pages may be stored, but no cursor claims the rest.
        expect(await cursorViolations(dbName, s)).toEqual([]);
        transport.crash = undefined;
        const next = engine(s, { dbName, fetch: transport.fetch, pageSize: 2 });
        await settle(next);
        await checkInvariants({ engine: next, server: s, transport });
        await next.close();
      }
    }
  }, 60_000);

  let baseline: string[] = [];

  it('the script delivers everything without a crash (and makes every kind of request there is to crash around)', async () => {
    const run = await crashRun();
    baseline = [...new Set(run.requests.map(kind))];
    expect(run.crashedAt).toBeUndefined();
    expect(baseline.sort()).toEqual(
      ['DELETE /v1/subscriptions/{guid}', 'GET /v1/deletions/{id}', 'GET /v1/subscriptions', 'PATCH /v1/subscriptions/{guid}', 'POST /v1/subscriptions'].sort(),
    );
  }, 30_000);

  for (const phase of ['before', 'after', 'returned'] as const) {
    it(`killed ${phase === 'before' ? 'before each request leaves' : phase === 'after' ? 'after the server applied each request, before the answer is read' : 'right after each answer is handed over'}: a new engine on the same store loses nothing`, async () => {
      // Kill around request 1, 2, 3, ... until a run no longer gets that far (the count varies a little with timing).
      const killed: string[] = [];
      for (let at = 1; at <= 40; at++) {
        const run = await crashRun({ at, phase }).catch((error: Error) => {
          throw new Error(`crash ${phase} request #${at}: ${error.message}`);
        });
        if (!run.crashedAt) break;
        killed.push(kind(run.crashedAt));
      }
      expect(killed.length).toBeGreaterThan(8);
      // Every kind of request was a crash point: pull pages, POST, PATCH, DELETE, the deletion poll.
      expect([...new Set(killed)].sort()).toEqual(baseline);
    }, 120_000);
  }
});
