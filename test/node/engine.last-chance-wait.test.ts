// An edit builds the page's last-chance copy inside its own transaction and tells it before it resolves: it
// waits for no other transaction's copy and for no answer from the listener (issue 31 item 4: an `update()`
// waited for a copy built after it, read behind its own push's writes, then for the page to say it held it).
import { expect, it } from 'vitest';
import type { LastChanceRequest } from '../../src/protocol.ts';
import type { Clock } from '../../src/types.ts';
import { systemClock } from '../../worker/clock.ts';
import { engine, server, until } from './helpers.ts';

/** The wall clock whose timers of a second or more never fire: a wait on a silent listener would never end here. */
const patient: Clock = { ...systemClock, setTimeout: (callback, ms) => (ms >= 1000 ? undefined : systemClock.setTimeout(callback, ms)) };

const paths = (copy: LastChanceRequest[] | undefined) => (copy ?? []).map((r) => r.path);

it('an edit resolves with its copy told, and never waits for a listener that does not answer', async () => {
  const s = await server({ seed: 3 });
  const e = engine(s, { pushDelay: 3_600_000, clock: patient });
  // A page that never answers: before, the edit waited for it (up to a second, which never passes here).
  const told: LastChanceRequest[][] = [];
  e.onLastChance((copy) => (told.push(copy), new Promise<void>(() => undefined)));
  await e.sync();
  const [a, b] = s.state().map((x) => x.guid);
  const path = (guid: string) => `subscriptions/${encodeURIComponent(guid)}`;
  await e.update(a!, { isSubscribed: false });
  // Told by the time it resolved: a page closed the moment after sends it.
  expect(paths(told.at(-1))).toEqual([path(a!)]);
  const before = told.length;
  await e.update(b!, { isSubscribed: false });
  expect(told.length).toBe(before + 1);
  expect(paths(told.at(-1))).toEqual([path(a!), path(b!)]);
  // Its own change event started no second build of the same copy.
  await new Promise((resolve) => setTimeout(resolve, 100));
  expect(told.length).toBe(before + 1);
  await e.close();
});

it('a copy read before an edit is never told after the edit’s own, while another tab’s edits start rebuilds', async () => {
  const s = await server({ seed: 8 });
  const e = engine(s, { pushDelay: 3_600_000, clock: patient });
  await e.sync();
  // Another tab on the same store: each of its edits starts a rebuild of this tab's copy.
  const other = engine(s, { dbName: e.dbName, pushDelay: 3_600_000, clock: patient });
  // Offline, both: nothing is sent, so no copy may lose an edit.
  e.setOnline(false);
  other.setOnline(false);
  const told: LastChanceRequest[][] = [];
  e.onLastChance((copy) => void told.push(copy));
  const guids = s.state().map((x) => x.guid);
  const path = (guid: string) => `subscriptions/${encodeURIComponent(guid)}`;
  // Four each: the copy holds at most 8 requests (`LAST_CHANCE_REQUESTS`).
  for (let i = 0; i < 4; i++) {
    const theirs = other.update(guids[2 * i + 1]!, { isSubscribed: false });
    await e.update(guids[2 * i]!, { isSubscribed: false });
    const from = told.length - 1;
    await theirs;
    await new Promise((resolve) => setTimeout(resolve, i * 3));
    // Every copy told since this edit resolved still holds it.
    for (const copy of told.slice(from)) expect(paths(copy)).toContain(path(guids[2 * i]!));
  }
  // In the end, every change waiting, both tabs' (the other's start may have sent one before it was told it was offline).
  const waiting = async () => (await e.pending()).map((c) => path(c.guid)).sort();
  await until(async () => JSON.stringify(paths(told.at(-1)).sort()) === JSON.stringify(await waiting()), 3000, 'the copy with every waiting change');
  expect((await waiting()).length).toBeGreaterThanOrEqual(7);
  await other.close();
  await e.close();
});

it('a copy an edit’s transaction could not read is read again after the edit, with it', async () => {
  const s = await server({ seed: 3 });
  const e = engine(s, { pushDelay: 3_600_000, clock: patient });
  const told: LastChanceRequest[][] = [];
  e.onLastChance((copy) => void told.push(copy));
  await e.sync();
  const [a] = s.state().map((x) => x.guid);
  const path = `subscriptions/${encodeURIComponent(a!)}`;
  // The copy's first read in the edit's transaction fails once (a storage error on a read; fake-indexeddb, this
  // database only): the edit itself commits.
  const proto = (globalThis as unknown as { IDBObjectStore: { prototype: { get(this: { transaction: { db: { name: string } } }, key: unknown): unknown } } }).IDBObjectStore.prototype;
  const get = proto.get;
  let armed = true;
  proto.get = function (key) {
    if (armed && key === 'pulls' && this.transaction.db.name === e.dbName) {
      armed = false;
      throw new DOMException('the disk said no', 'UnknownError');
    }
    return get.call(this, key);
  };
  try {
    await e.update(a!, { isSubscribed: false });
    expect(armed).toBe(false);
    expect((await e.pending()).map((c) => c.guid)).toEqual([a]);
    // Before, no copy held it until some later change event: a page closed now would leave it behind.
    await until(async () => paths(told.at(-1)).includes(path), 2000, 'a copy with the edit');
  } finally {
    proto.get = get;
  }
  await e.close();
});
