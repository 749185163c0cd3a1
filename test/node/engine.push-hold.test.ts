// Issue 25's pushes against a dead server: while a failed push's backoff holds, an edit joins the held request
// instead of starting an upload of its own (each of which carried the whole queue and rewrote every change in
// it), and a pull that answers sends it. Counted in requests and writes, not in time.
import { describe, expect, it } from 'vitest';
import type { SyncEngine } from '../../worker/index.ts';
import { episodeEngine, gpodderServer } from './episode-helpers.ts';
import { engine as opaEngine, server, uniqueDb } from './helpers.ts';

// A backoff far longer than the test: every attempt after the first would be an edit's own.
const BACKOFF = { baseDelay: 60_000, maxDelay: 60_000 };
const EDITS = 40;
const feed = (n: number) => `https://feeds.example/hold-${n}.xml`;

/** Count the records written to the outbox of `dbName` (fake-indexeddb's put and add, this database only). */
function countOutboxWrites(dbName: string): { count: number; restore(): void } {
  const proto = (globalThis as unknown as { IDBObjectStore: { prototype: Record<string, (...args: unknown[]) => unknown> } }).IDBObjectStore.prototype;
  const originals = { put: proto.put!, add: proto.add! };
  const counter = {
    count: 0,
    restore() {
      proto.put = originals.put;
      proto.add = originals.add;
    },
  };
  for (const method of ['put', 'add'] as const) {
    const original = originals[method];
    proto[method] = function (this: { name: string; transaction: { db: { name: string } } }, ...args: unknown[]) {
      if (this.transaction.db.name === dbName && this.name === 'outbox') counter.count++;
      return original.apply(this, args);
    };
  }
  return counter;
}

/** A fetch that can play a dead server (connection refused), counting the requests it refused by method. */
function deadSwitch(origin: string) {
  const control = { dead: false, refused: [] as string[] };
  const fetchImpl: typeof fetch = (input, init) => {
    if (!control.dead) return fetch(input, init);
    control.refused.push(init?.method ?? 'GET');
    return fetch(String(input).replace(origin, 'http://127.0.0.1:9'), init);
  };
  return Object.assign(control, { fetch: fetchImpl });
}

/**
 * `EDITS` adds of new feeds while the server is dead, each followed by a pause in which a push it started runs
 * (as an app's edits come spread over time), then a sync() that queues behind any push still running. Resolves
 * with the outbox writes they made.
 */
async function addWhileDead(e: SyncEngine, dbName: string): Promise<number> {
  const writes = countOutboxWrites(dbName);
  try {
    for (let i = 0; i < EDITS; i++) {
      await e.add(feed(i));
      await new Promise((r) => setTimeout(r, 10));
    }
    await e.sync().catch(() => undefined);
    return writes.count;
  } finally {
    writes.restore();
  }
}

/** What the dead server was asked and what the queue says of it: at most two attempts, each change written once per attempt. */
async function expectHeld(e: SyncEngine, attempts: number, writes: number): Promise<void> {
  // Without the hold: an attempt per edit, each carrying the whole queue (and rewriting every change in it).
  expect(attempts).toBeGreaterThanOrEqual(1);
  expect(attempts).toBeLessThanOrEqual(2);
  const pending = await e.pending();
  expect(pending).toHaveLength(EDITS);
  for (const change of pending) expect(change.attempts).toBeLessThanOrEqual(1);
  // Each add: its queue entry, marked sent before it leaves, its failure (attempts and error): once each at most.
  expect(writes).toBeLessThanOrEqual(3 * EDITS);
}

describe('a failed push holds the request; edits join it (issue 25)', () => {
  it(`gPodder: ${EDITS} adds against a dead server make at most two uploads; a pull that answers sends them in one`, async () => {
    const s = await gpodderServer('mygpo');
    s.registerDevice('web-player');
    const net = deadSwitch(new URL(s.url).origin);
    const dbName = uniqueDb('push-hold');
    const e = episodeEngine(s, 'gpodder', 'push-hold', { dbName, retry: BACKOFF, fetch: net.fetch });
    await e.sync();
    net.dead = true;
    const writes = await addWhileDead(e, dbName);
    await expectHeld(e, net.refused.filter((m) => m === 'POST').length, writes);
    net.dead = false;
    await e.sync();
    expect(s.log().filter((r) => r.method === 'POST' && /subscriptions\//.test(r.path))).toHaveLength(1);
    expect(await e.pending()).toEqual([]);
    expect(s.subscribed({ device: 'web-player' })).toHaveLength(EDITS);
  });

  it(`OPA: ${EDITS} adds against a dead server send at most two of them; a pull that answers sends every one`, async () => {
    const s = await server();
    const net = deadSwitch(new URL(s.url).origin);
    const e = opaEngine(s, { retry: BACKOFF, fetch: net.fetch });
    await e.sync();
    net.dead = true;
    const writes = await addWhileDead(e, e.dbName);
    await expectHeld(e, net.refused.filter((m) => m === 'POST').length, writes);
    net.dead = false;
    const report = await e.sync();
    expect(report.pushed).toBe(EDITS);
    expect(await e.pending()).toEqual([]);
    expect(s.state()).toHaveLength(EDITS);
  });
});
