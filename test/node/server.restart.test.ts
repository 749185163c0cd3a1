// Restarting the reference servers (issue 19 §4): `dataFile` / `--data` keeps the state across a stop
// (even a SIGKILL right after an answer), and without it each start draws new guids, so a restart never
// hands out a guid an earlier run did.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createGpodderApi } from '../server/gpodder/client.ts';
import { startGpodderServer } from '../server/gpodder/server.ts';
import { startServer } from '../server/server.ts';
import { until } from './helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'opa-sync-restart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshFile = (): string => join(dir, `state-${++files}.json`);
const AUTH = { Authorization: 'Bearer demo-token', 'Content-Type': 'application/json' };

describe('without a data file', () => {
  it('each start draws other guids (seed data and server-made guids), unless a randomSeed is given', async () => {
    const a = await startServer({ seed: 3 });
    const b = await startServer({ seed: 3 });
    const c = await startServer({ seed: 3, randomSeed: 7 });
    const d = await startServer({ seed: 3, randomSeed: 7 });
    try {
      const guids = (s: typeof a) => s.state().map((x) => x.guid);
      expect(guids(a)).not.toEqual(guids(b));
      expect(guids(c)).toEqual(guids(d));
      expect(a.foreign.add('https://new.example/rss').guid).not.toBe(b.foreign.add('https://new.example/rss').guid);
    } finally {
      await Promise.all([a, b, c, d].map((s) => s.close()));
    }
  });
});

describe('OPA server with a data file', () => {
  it('comes back with every entry, guid chain, collapse and tombstone; new guids and deletion ids are new', async () => {
    const file = freshFile();
    const first = await startServer({ dataFile: file, seed: 4, randomSeed: 1, deletionDelayMs: 1 });
    const [a, b, c, d] = first.state();
    first.foreign.patch(a.guid, { new_guid: '0b6c2c2e-4f39-4d57-9f56-1a0d7b4f7c11', new_feed_url: 'https://moved.example/rss' });
    first.foreign.patch(b.guid, { new_guid: c.guid });
    const del = await fetch(`${first.url}/subscriptions/${d.guid}`, { method: 'DELETE', headers: AUTH });
    const { deletion_id } = (await del.json()) as { deletion_id: number };
    await until(() => first.entry(d.guid)?.deleted, 5000, 'the deletion job');
    const before = first.state();
    await first.close();
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);

    // The same random seed again: only the kept random state keeps it from re-issuing guids.
    const second = await startServer({ dataFile: file, seed: 4, randomSeed: 1, deletionDelayMs: 1 });
    try {
      expect(second.state()).toEqual(before);
      expect(second.entry(b.guid)?.guid).toBe(c.guid);
      const added = second.foreign.add('https://after-restart.example/rss');
      expect(before.flatMap((x) => [x.guid, ...x.old_guids])).not.toContain(added.guid);
      const again = await fetch(`${second.url}/subscriptions/${added.guid}`, { method: 'DELETE', headers: AUTH });
      expect(((await again.json()) as { deletion_id: number }).deletion_id).toBeGreaterThan(deletion_id);
    } finally {
      await second.close();
    }
  });

  it('refuses a file that holds something else', async () => {
    const file = freshFile();
    writeFileSync(file, JSON.stringify({ kind: 'other', version: 1, state: {} }));
    await expect(startServer({ dataFile: file })).rejects.toThrow(/does not hold/);
  });
});

describe('gPodder server with a data file', () => {
  for (const dialect of ['mygpo', 'opodsync'] as const) {
    it(`${dialect}: devices, lists with their history, groups and episode actions come back`, async () => {
      const file = freshFile();
      let ms = 1_700_000_000_000;
      const time = { now: () => ms, setTimeout, clearTimeout: (h: unknown) => clearTimeout(h as NodeJS.Timeout) };
      const first = await startGpodderServer({ dialect, dataFile: file, time });
      const api = createGpodderApi(first.url);
      await api('POST', '/api/2/devices/alice/web.json', { body: { caption: 'Web', type: 'desktop' } });
      ms += 5000;
      await api('POST', '/api/2/subscriptions/alice/web.json', { body: { add: ['https://a.example/rss', 'https://b.example/rss'] } });
      ms += 5000;
      await api('POST', '/api/2/subscriptions/alice/web.json', { body: { remove: ['https://b.example/rss'] } });
      const action = { podcast: 'https://a.example/rss', episode: 'https://a.example/1.mp3', action: 'play', timestamp: '2023-01-01T00:00:00', started: 0, position: 30, total: 60 };
      await api('POST', '/api/2/episodes/alice.json', { body: [action] });
      await api('POST', '/index.php/apps/gpoddersync/episode_action/create', { body: [{ ...action, guid: 'g' }] });
      const pulled = (await api('GET', '/api/2/subscriptions/alice/web.json?since=1700000001')).text;
      const state = { devices: first.devices(), log: first.episodeLog(), rows: first.episodeLog({ family: 'nextcloud' }), rowsOf: first.state() };
      await first.close();

      const second = await startGpodderServer({ dialect, dataFile: file, time });
      try {
        const again = createGpodderApi(second.url);
        expect((await again('GET', '/api/2/subscriptions/alice/web.json?since=1700000001')).text).toBe(pulled);
        expect({ devices: second.devices(), log: second.episodeLog(), rows: second.episodeLog({ family: 'nextcloud' }), rowsOf: second.state() }).toEqual(state);
        // mygpo's repeat filter holds across the restart; opodsync appends.
        await again('POST', '/api/2/episodes/alice.json', { body: [action] });
        expect(second.episodeLog()).toHaveLength(dialect === 'mygpo' ? 1 : 3);
      } finally {
        await second.close();
      }
    });
  }

  it('refuses the other dialect\'s file', async () => {
    const file = freshFile();
    await (await startGpodderServer({ dialect: 'mygpo', dataFile: file })).close();
    await expect(startGpodderServer({ dialect: 'opodsync', dataFile: file })).rejects.toThrow(/mygpo/);
  });
});

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/tsx/dist/cli.mjs', import.meta.url));

/** Start `npm run server -- ...args` and resolve with its base URL once it listens. */
async function cli(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  // Its own process group: tsx runs the server in a child process, and the kill must reach it too.
  const child = spawn(process.execPath, [tsx, 'test/server/cli.ts', '--port', '0', ...args], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], detached: true });
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = /^listening on (\S+)$/.exec(line);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`cli exited early with ${code}`)));
  });
  return { child, url };
}

/** SIGKILL to the whole group: no shutdown hook runs, so only what was written before each answer survives. */
const kill = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    child.stdout!.once('close', () => resolve());
    process.kill(-child.pid!, 'SIGKILL');
  });

describe('the CLI with --data, killed and started again', () => {
  it('opa: a subscription answered before the kill is there after it, under the same guid', async () => {
    const file = freshFile();
    const first = await cli(['--data', file]);
    const res = await fetch(`${first.url}/subscriptions`, { method: 'POST', headers: AUTH, body: JSON.stringify({ subscriptions: [{ feed_url: 'https://kept.example/rss' }] }) });
    const { success } = (await res.json()) as { success: { guid: string }[] };
    await kill(first.child);
    const second = await cli(['--data', file]);
    try {
      const list = (await (await fetch(`${second.url}/subscriptions`, { headers: AUTH })).json()) as { subscriptions: { guid: string; feed_url: string }[] };
      expect(list.subscriptions).toEqual([expect.objectContaining({ guid: success[0].guid, feed_url: 'https://kept.example/rss' })]);
    } finally {
      await kill(second.child);
    }
  });

  it('gpodder: --seed fills the first start only; the kept list and actions come back after a kill', async () => {
    const file = freshFile();
    const first = await cli(['--protocol', 'gpodder', '--seed', '3', '--data', file]);
    const api = createGpodderApi(first.url);
    const seeded = ((await api<{ add: string[] }>('GET', '/api/2/subscriptions/alice/opa-sync.json?since=0')).body).add;
    expect(seeded).toHaveLength(3);
    await api('POST', '/api/2/episodes/alice.json', { body: [{ podcast: seeded[0], episode: 'https://x.example/1.mp3', action: 'play', started: 0, position: 1, total: 2 }] });
    await kill(first.child);
    expect(existsSync(file)).toBe(true);
    const second = await cli(['--protocol', 'gpodder', '--seed', '3', '--data', file]);
    try {
      const again = createGpodderApi(second.url);
      expect(((await again<{ add: string[] }>('GET', '/api/2/subscriptions/alice/opa-sync.json?since=0')).body).add).toEqual(seeded);
      expect(((await again<{ actions: unknown[] }>('GET', '/api/2/episodes/alice.json?since=0')).body).actions).toHaveLength(1);
    } finally {
      await kill(second.child);
    }
  });
});
