// The figures as a plain-text table (and as Markdown, for the README).
import type { BenchResult, TargetCheck } from '../bench.ts';

const fmt = (n: number | undefined, digits = 0): string =>
  n === undefined || Number.isNaN(n) ? '–' : n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

function mark(targets: TargetCheck[], key: string): { target: string; ok: string } {
  const t = targets.find((x) => x.key === key);
  if (!t) return { target: '', ok: '' };
  return { target: t.target, ok: t.ok === undefined ? '?' : t.ok ? '✓' : '✗' };
}

type Row = [figure: string, value: string, detail: string, target: string, ok: string];

/** The rows of the table. */
export function rows(r: BenchResult): Row[] {
  const out: Row[] = [];
  const t = r.targets;
  for (const key of ['n1k', 'n10k', 'n100k'] as const) {
    const f = r.initialPull[key];
    if (!f) continue;
    const m = mark(t, `initialPull.${key}.ratio`);
    out.push([
      `initialPull ${fmt(f.n)} (${f.runs} runs)`,
      `${fmt(f.engineMs)} ms vs ${fmt(f.baselineMs)} ms`,
      `ratio ${f.ratio.toFixed(2)} (paired ${f.pairedRatio.toFixed(2)}), ${fmt(f.entriesPerSec)} vs ${fmt(f.baselineEntriesPerSec)} entries/s, ${f.requests} GETs`,
      m.target,
      m.ok,
    ]);
  }
  const inc = r.incrementalPull;
  if (inc) {
    const m = mark(t, 'incrementalPull.noChange.requests');
    out.push([`incrementalPull no change (${fmt(inc.n)})`, `${inc.noChange.requests} request(s)`, `${fmt(inc.noChange.ms, 1)} ms`, m.target, m.ok]);
    out.push([`incrementalPull ${inc.tenChanges.changes} changes`, `${inc.tenChanges.requests} request(s)`, `${fmt(inc.tenChanges.ms, 1)} ms`, '', '']);
    if (inc.noChangeAfterBulk) {
      const mb = mark(t, 'incrementalPull.noChangeAfterBulk.requests');
      out.push([
        'incrementalPull no change, right after bulk',
        `${inc.noChangeAfterBulk.requests} request(s)`,
        `${fmt(inc.noChangeAfterBulk.ms, 1)} ms (the overlap re-reads the 100 newest entries, not 2 s of them)`,
        mb.target,
        mb.ok,
      ]);
    }
  }
  const u = r.updateLatency;
  if (u?.p50Ms !== undefined) {
    const m = mark(t, 'updateLatency.p50Ratio');
    const m95 = mark(t, 'updateLatency.p95Ratio');
    const raw = 'baseline: page → plain worker → one raw IndexedDB put → complete, interleaved';
    out.push([`update() until durable (${u.updates}) / raw write, p50`, `ratio ${fmt(u.p50Ratio, 2)}`, `${fmt(u.p50Ms, 2)} vs ${fmt(u.rawP50Ms, 2)} ms (${raw}); max ${fmt(u.maxMs, 1)} ms`, m.target, m.ok]);
    out.push([`update() until durable / raw write, p95`, `ratio ${fmt(u.p95Ratio, 2)}`, `${fmt(u.p95Ms, 2)} vs ${fmt(u.rawP95Ms, 2)} ms`, m95.target, m95.ok]);
    if (u.editP50Ms !== undefined) {
      out.push([
        `the least edit / raw write, p50 / p95`,
        `ratio ${fmt(u.editFloorP50Ratio, 2)} / ${fmt(u.editFloorP95Ratio, 2)}`,
        `${fmt(u.editP50Ms, 2)} / ${fmt(u.editP95Ms, 2)} ms, interleaved: plain worker, one readwrite transaction reads the row, its queued changes and the store's owner, then writes the row and a queue entry`,
        '',
        '',
      ]);
    }
  }
  if (u?.longestTaskMs !== undefined) {
    const m = mark(t, 'updateLatency.longestTaskMs');
    out.push([
      `longest main-thread task, ${fmt(u.longTaskPullSize)} pull`,
      `${fmt(u.longestTaskMs)} ms`,
      `worst ${fmt(u.longestTaskWorstMs)} ms (longtask ≥ 50 ms; 0 = none); 10 ms timer late by ≤ ${fmt(u.maxLoopGapMs)} ms`,
      m.target,
      m.ok,
    ]);
  }
  const co = r.coldOpen;
  if (co) {
    const m = mark(t, 'coldOpen.ratio');
    out.push([
      `cold open, ${fmt(co.rows)} cached subscriptions (${co.runs} runs) / raw page`,
      `ratio ${fmt(co.ratio, 2)}`,
      `${fmt(co.engineMs)} vs ${fmt(co.rawMs)} ms from navigation start to the rows in the DOM (p95 ${fmt(co.engineP95Ms)} vs ${fmt(co.rawP95Ms)} ms; ready snapshot at ${fmt(co.engineReadyMs)} ms); baseline: the page reads the same database with one getAll`,
      m.target,
      m.ok,
    ]);
  }
  const rp = r.replay;
  if (rp) {
    const mr = mark(t, 'replay.requests');
    const mt = mark(t, 'replay.ms');
    out.push([
      `replay ${fmt(rp.changes)} changes / ${rp.subscriptions} subs`,
      `${rp.requests} push requests`,
      `${rp.queued} queued after coalescing, ${rp.patches} PATCH; +${rp.totalRequests - rp.requests} pull GET, +${rp.preflights} CORS preflights`,
      mr.target,
      mr.ok,
    ]);
    out.push([`replay drain at ${rp.latencyMs} ms latency`, `${fmt(rp.ms)} ms`, `runs ${rp.msRuns.map((x) => fmt(x)).join(', ')} ms`, mt.target, mt.ok]);
  }
  const gp = r.gpodderReplay;
  if (gp) {
    const m = mark(t, 'gpodderReplay.requests');
    out.push([
      `gPodder replay ${fmt(gp.changes)} toggles / ${gp.subscriptions} feeds`,
      `${gp.requests} upload(s)`,
      `${gp.queued} queued, ${gp.urlsSent} URLs sent; ${gp.totalRequests} requests in all; drained in ${fmt(gp.ms)} ms at ${gp.latencyMs} ms latency (runs ${gp.msRuns.map((x) => fmt(x)).join(', ')} ms)`,
      m.target,
      m.ok,
    ]);
  }
  const im = r.import;
  if (im) {
    for (const kind of ['importOpml', 'addMany'] as const) {
      const f = im[kind];
      const m = mark(t, `import.${kind}.ratio`);
      const ms = mark(t, `import.${kind}.snapshots`);
      const call = kind === 'importOpml' ? `importOpml(${fmt(im.feeds)}-outline OPML)` : `addMany(${fmt(im.feeds)} URLs)`;
      out.push([
        `${call} offline → all rows in the store / one bulkPut (${f.runs} runs)`,
        `ratio ${fmt(f.ratio, 2)}`,
        `${fmt(f.ms)} vs ${fmt(f.baselineMs, 1)} ms (paired ${fmt(f.pairedRatio, 2)}; the change event at ${fmt(f.eventMs)} ms, the call resolved at ${fmt(f.callMs)} ms); baseline: page → plain worker → one Dexie bulkPut of ${fmt(im.feeds)} rows → committed → page; ${fmt(im.existing)} rows before`,
        m.target,
        m.ok,
      ]);
      out.push([
        `the least import of ${fmt(im.feeds)} / one bulkPut, beside ${kind}`,
        `ratio ${fmt(f.leastRatio, 2)}`,
        `${fmt(f.leastMs, 1)} ms: the same plain worker, one transaction reads the keys the rows land on, then writes the rows and a queue entry each`,
        '',
        '',
      ]);
      out.push([`the store's snapshots during ${kind}`, `${f.snapshots}`, `the most of any run, up to the one with every row; +${f.snapshotsAfter} in the 500 ms after`, ms.target, ms.ok]);
    }
    const o = im.reconnect.opa;
    const g = im.reconnect.gpodder;
    const mo = mark(t, 'import.reconnect.opa.requests');
    const mg = mark(t, 'import.reconnect.gpodder.requests');
    out.push([`${fmt(im.feeds)} feeds imported offline, online again: OPA`, `${o.requests} POST`, `${o.totalRequests} requests in all (+${o.preflights} preflights); drained in ${fmt(o.ms)} ms`, mo.target, mo.ok]);
    out.push([`the same, gPodder (${g.runs} runs)`, `${g.requests} upload(s)`, `${g.totalRequests} requests in all; drained in ${fmt(g.ms)} ms`, mg.target, mg.ok]);
  }
  const ds = r.deadServer;
  if (ds) {
    for (const [name, f] of [['OPA', ds.opa], ['gPodder', ds.gpodder]] as const) {
      const m = mark(t, `deadServer.${name === 'OPA' ? 'opa' : 'gpodder'}.requests`);
      const by = Object.entries(f.byMethod).map(([method, n]) => `${n} ${method}`).join(', ');
      out.push([
        `${ds.adds} adds over ${fmt(ds.spanMs)} ms against a dead server, backoff ${fmt(ds.backoffMs / 1000)} s: requests (${name}, ${f.runs} runs)`,
        `${f.requests}`,
        `range ${f.min}–${f.max} (${by || 'none'}), the engine's fetches in ${fmt((ds.spanMs + ds.windowMs) / 1000, 1)} s; the dead server saw ${f.serverSaw} (preflights; Firefox's own retries); ${f.pending} still queued`,
        m.target,
        m.ok,
      ]);
    }
  }
  const ep = r.episodes;
  if (ep) {
    const f = ep.firstSync;
    out.push([
      `episodes: first sync of ${fmt(f.n)} states (${f.runs} runs)`,
      `${fmt(f.engineMs)} ms vs ${fmt(f.baselineMs)} ms`,
      `ratio ${f.ratio.toFixed(2)} (paired ${f.pairedRatio.toFixed(2)}) vs a naive worker (fetch, bulkPut), ${fmt(f.feeds)} feeds; ${f.episodeRequests} vs ${f.baselineEpisodeRequests} episode GETs (mygpo pages of 1,000), ${f.requests} vs ${f.baselineRequests} requests in all`,
      ...(Object.values(mark(t, 'episodes.firstSync.ratio')) as [string, string]),
    ]);
    const p = ep.playback;
    const mp = mark(t, 'episodes.playback.uploadsPerHour');
    out.push([
      `episodes: ${fmt(p.seconds)} s of playback, setProgress each second`,
      `${fmt(p.uploads)} uploads`,
      `SIMULATED time (Node, virtual clock); progressInterval ${fmt(p.progressIntervalMs / 1000)} s; +${p.trailingUploads} after the pause (the last position); naive: ${fmt(p.naiveUploads)}`,
      mp.target,
      mp.ok,
    ]);
    const o = ep.offline;
    const mo = mark(t, 'episodes.offline.uploads');
    const ma = mark(t, 'episodes.offline.actionsSent');
    out.push([
      `episodes: ${fmt(o.changes)} offline progress changes / ${o.episodes} episodes`,
      `${o.uploads} upload(s)`,
      `${o.queued} pending; +${o.totalRequests - o.uploads} pull GETs; drained in ${fmt(o.ms)} ms at ${o.latencyMs} ms latency; naive: ${fmt(o.naiveUploads)} uploads`,
      mo.target,
      mo.ok,
    ]);
    out.push([`episodes: actions in those uploads`, `${fmt(o.actionsSent)}`, '', ma.target, ma.ok]);
  }
  const mem = r.memory;
  if (mem) {
    const m = mark(t, 'memory.peakHeapMB');
    out.push([`worker peak JS heap, ${fmt(mem.n)} pull`, `${fmt(mem.peakHeapMB, 1)} MB`, `max ${fmt(mem.peakHeapMaxMB, 1)} MB; baseline worker ${fmt(mem.baselinePeakHeapMB, 1)} MB`, m.target, m.ok]);
  }
  const st = r.store;
  if (st) {
    const m = mark(t, 'store.small.otherTab.p95Ms');
    for (const e of [st.small, st.large]) {
      out.push([`store: edit → React DOM, ${fmt(e.rows)} rows, same tab, at rest (${e.edits})`, `p50 ${fmt(e.sameTab.p50Ms, 1)} ms`, `p95 ${fmt(e.sameTab.p95Ms, 1)} ms, from the update() call`, '', '']);
      const mark2 = e === st.small ? m : { target: '', ok: '' };
      out.push([`store: another tab's edit → React DOM, ${fmt(e.rows)} rows, store at rest (${e.edits})`, `p50 ${fmt(e.otherTab.p50Ms, 1)} ms`, `p95 ${fmt(e.otherTab.p95Ms, 1)} ms, from its update() resolving`, mark2.target, mark2.ok]);
      out.push([`store: the same, 30 ms after an edit here (${e.edits})`, `p50 ${fmt(e.otherTabBusy.p50Ms, 1)} ms`, `p95 ${fmt(e.otherTabBusy.p95Ms, 1)} ms, a snapshot of this tab's push a frame ahead`, '', '']);
    }
    out.push([`store: snapshots, first sync of ${fmt(st.firstSync.n)}`, `${fmt(st.firstSync.snapshots)}`, `${st.firstSync.renders} list sizes rendered; all shown at ${fmt(st.firstSync.ms)} ms`, '', '']);
  }
  const sc = r.scale;
  if (sc) {
    const p = sc.playback;
    const mm = mark(t, 'scale.playback.main.p95Ms');
    const mw = mark(t, 'scale.playback.worker.p95Ms');
    out.push([`setProgress each second for ${p.seconds} s, store of a ${fmt(p.episodes)}-episode feed: main thread busy per second`, `p95 ${fmt(p.main.p95Ms, 2)} ms`, `p50 ${fmt(p.main.p50Ms, 2)}, max ${fmt(p.main.maxMs, 2)} ms (wall p95 ${fmt(p.mainWall.p95Ms, 2)} ms); ${p.snapshots} snapshots; the CPU time of the thread's tasks per second, from a Chrome trace`, mm.target, mm.ok]);
    out.push([`the same, worker busy per second`, `p95 ${fmt(p.worker.p95Ms, 2)} ms`, `p50 ${fmt(p.worker.p50Ms, 2)}, max ${fmt(p.worker.maxMs, 2)} ms (wall p95 ${fmt(p.workerWall.p95Ms, 2)} ms)`, mw.target, mw.ok]);
    const l = sc.largeStore;
    const ml = mark(t, 'scale.largeStore.total.p95Ms');
    out.push([`store of ${fmt(l.rows)} subscriptions: change event → snapshot (${l.edits})`, `p95 ${fmt(l.total.p95Ms, 2)} ms`, `p50 ${fmt(l.total.p50Ms, 2)} ms; of it the store's reads (3 round trips) p95 ${fmt(l.reads.p95Ms, 2)} ms, its own work p50 ${fmt(l.own.p50Ms, 2)} / p95 ${fmt(l.own.p95Ms, 2)} ms`, ml.target, ml.ok]);
  }
  const s = r.size;
  if (s) {
    const mp = mark(t, 'size.pageGzipBytes');
    const mw = mark(t, 'size.workerOwnGzipBytes');
    const files = (part: 'page' | 'worker' | 'sw') => s.files.filter((f) => f.part === part).map((f) => f.file).join(' + ');
    out.push(['page entry with the store, gzip', `${fmt(s.pageGzipBytes)} B`, `${files('page')} (${s.source}); the store's part ${fmt(s.storeGzipBytes)} B (built without it: the difference)`, mp.target, mp.ok]);
    const deps = s.workerDepsGzipBytes;
    out.push([
      "worker: the engine's own share, gzip",
      s.workerOwnGzipBytes === undefined ? '–' : `${fmt(s.workerOwnGzipBytes)} B`,
      `total ${fmt(s.workerGzipBytes)} B (${files('worker')}, ${s.source}); ${deps ? `the total without Dexie (${fmt(deps.dexie)} B alone) and comlink (${fmt(deps.comlink)} B alone)` : 'no source map beside the bundle'}`,
      mw.target,
      mw.ok,
    ]);
    out.push([
      "service worker's import (opa-sync/sw), gzip",
      `${fmt(s.swGzipBytes)} B`,
      `${files('sw')} (${s.source}; Dexie external)${s.swBundle ? `; bundled whole into an app's service worker ${fmt(s.swBundle.gzipBytes)} B, without Dexie ${fmt(s.swBundle.withoutDexieGzipBytes)} B` : ''}`,
      '',
      '',
    ]);
  }
  return out;
}

const HEAD: Row = ['figure', 'value', 'detail', 'target', ''];

/** Aligned plain text. */
export function textTable(r: BenchResult): string {
  const all = [HEAD, ...rows(r)];
  const widths = HEAD.map((_, i) => Math.max(...all.map((row) => [...row[i]!].length)));
  const line = (row: Row) => row.map((cell, i) => cell + ' '.repeat(widths[i]! - [...cell].length)).join('  ').trimEnd();
  return [line(HEAD), widths.map((w) => '-'.repeat(w)).join('  '), ...all.slice(1).map(line)].join('\n');
}

/** A Markdown table. */
export function markdownTable(r: BenchResult): string {
  const all = rows(r);
  return ['| figure | value | detail | target | |', '|---|---|---|---|---|', ...all.map((row) => `| ${row.join(' | ')} |`)].join('\n');
}

/** One Markdown table with a column per engine: the figures the README compares across engines. */
export function engineTable(results: BenchResult[]): string {
  const cell = (r: BenchResult, figure: (r: BenchResult) => string | undefined) => figure(r) ?? '–';
  const pull = (key: 'n1k' | 'n10k' | 'n100k') => (r: BenchResult) => {
    const f = r.initialPull[key];
    return f && `${fmt(f.engineMs)} vs ${fmt(f.baselineMs)} ms, **${f.ratio.toFixed(2)}**`;
  };
  const lines: [string, (r: BenchResult) => string | undefined][] = [
    ['version', (r) => r.meta.browserVersion],
    ['IndexedDB', (r) => (r.meta.onDisk ? 'on disk (profile dir)' : 'in memory (ephemeral session)')],
    ['initial pull 1k, engine vs baseline, ratio', pull('n1k')],
    ['initial pull 10k', pull('n10k')],
    ['initial pull 100k', pull('n100k')],
    ['incremental pull, nothing changed (10k)', (r) => r.incrementalPull && `${r.incrementalPull.noChange.requests} request, ${fmt(r.incrementalPull.noChange.ms, 1)} ms`],
    ['incremental pull, nothing changed, right after a 10k bulk import', (r) => r.incrementalPull?.noChangeAfterBulk && `${r.incrementalPull.noChangeAfterBulk.requests} request, ${fmt(r.incrementalPull.noChangeAfterBulk.ms, 1)} ms`],
    ['incremental pull, 10 changes', (r) => r.incrementalPull && `${r.incrementalPull.tenChanges.requests} request, ${fmt(r.incrementalPull.tenChanges.ms, 1)} ms`],
    ['`update()` until durable, p50 / p95, and its ratio to a raw write round trip', (r) => r.updateLatency?.p50Ms !== undefined ? `${fmt(r.updateLatency.p50Ms, 1)} / ${fmt(r.updateLatency.p95Ms, 1)} ms, **${fmt(r.updateLatency.p50Ratio, 2)} / ${fmt(r.updateLatency.p95Ratio, 2)}**` : undefined],
    ['the least edit (a plain worker: read the row, its queue and the owner, write the row and a queue entry) / raw write, p50', (r) => r.updateLatency?.editP50Ms !== undefined ? `${fmt(r.updateLatency.editP50Ms, 1)} ms, **${fmt(r.updateLatency.editFloorP50Ratio, 2)}**` : undefined],
    ['longest main-thread task, 10k pull', (r) => r.updateLatency?.longestTaskMs !== undefined ? `${fmt(r.updateLatency.longestTaskMs)} ms` : 'not measurable (no longtask entries)'],
    ['10 ms timer late by at most (10k pull)', (r) => r.updateLatency?.maxLoopGapMs !== undefined ? `${fmt(r.updateLatency.maxLoopGapMs)} ms` : undefined],
    ['replay 1,000 offline changes / 100 subs', (r) => r.replay && `${r.replay.requests} requests, ${fmt(r.replay.ms)} ms`],
    ['gPodder: replay 1,000 offline toggles / 100 feeds', (r) => r.gpodderReplay && `${r.gpodderReplay.requests} upload (${r.gpodderReplay.totalRequests} requests in all), ${fmt(r.gpodderReplay.ms)} ms`],
    ['importOpml of 1,000 feeds offline → all rows in the store vs one bulkPut in a worker, ratio (quick: 200)', (r) => r.import && `${fmt(r.import.importOpml.ms)} vs ${fmt(r.import.importOpml.baselineMs, 1)} ms, **${fmt(r.import.importOpml.ratio, 2)}**, ${r.import.importOpml.snapshots} snapshot(s)`],
    ['the least import of 1,000 (one transaction: read the keys, write the rows and a queue entry each) / one bulkPut, beside importOpml', (r) => r.import && `${fmt(r.import.importOpml.leastMs, 1)} ms, **${fmt(r.import.importOpml.leastRatio, 2)}**`],
    ['addMany of 1,000 feeds, the same', (r) => r.import && `${fmt(r.import.addMany.ms)} vs ${fmt(r.import.addMany.baselineMs, 1)} ms, **${fmt(r.import.addMany.ratio, 2)}**, ${r.import.addMany.snapshots} snapshot(s)`],
    ['1,000 feeds imported offline: requests on reconnect, OPA; gPodder', (r) => r.import && `${r.import.reconnect.opa.requests} POST; ${r.import.reconnect.gpodder.requests} upload(s)`],
    ['40 adds over 0.5 s against a dead server, long backoff: requests, OPA; gPodder', (r) => r.deadServer && `${r.deadServer.opa.requests} (${r.deadServer.opa.min}–${r.deadServer.opa.max}); ${r.deadServer.gpodder.requests} (${r.deadServer.gpodder.min}–${r.deadServer.gpodder.max})`],
    ['episodes: first sync of episode states (30k over 300 feeds; quick: 1.5k), engine vs naive baseline, ratio (mygpo)', (r) => r.episodes && `${fmt(r.episodes.firstSync.engineMs)} vs ${fmt(r.episodes.firstSync.baselineMs)} ms, **${r.episodes.firstSync.ratio.toFixed(2)}**, ${r.episodes.firstSync.episodeRequests} episode GETs`],
    ['episodes: an hour of playback, setProgress each second (simulated time)', (r) => r.episodes && `${r.episodes.playback.uploads} uploads (+${r.episodes.playback.trailingUploads} after the pause)`],
    ['episodes: 1,000 offline progress changes / 50 episodes', (r) => r.episodes && `${r.episodes.offline.uploads} upload of ${r.episodes.offline.actionsSent} actions, ${fmt(r.episodes.offline.ms)} ms`],
    ['client.store() in React: another tab\'s edit → DOM p50 / p95, store at rest, 200 · 10k rows', (r) => r.store && `${fmt(r.store.small.otherTab.p50Ms, 1)} / ${fmt(r.store.small.otherTab.p95Ms, 1)} · ${fmt(r.store.large.otherTab.p50Ms, 1)} / ${fmt(r.store.large.otherTab.p95Ms, 1)} ms`],
    ['client.store(): snapshots during a first sync', (r) => r.store && `${fmt(r.store.firstSync.snapshots)} for ${fmt(r.store.firstSync.n)} rows`],
    ['worker peak JS heap, 100k pull', (r) => (r.memory ? `${fmt(r.memory.peakHeapMB, 1)} MB` : 'not measurable (CDP only)')],
  ];
  const head = `| figure | ${results.map((r) => r.meta.browser).join(' | ')} |`;
  const rule = `|---|${results.map(() => '---').join('|')}|`;
  return [head, rule, ...lines.map(([name, figure]) => `| ${name} | ${results.map((r) => cell(r, figure)).join(' | ')} |`)].join('\n');
}
