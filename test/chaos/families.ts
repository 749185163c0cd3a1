// The soak families of issues 31 and 33, shared by both scenarios. Each seed draws, from a stream of its own,
// which families it runs and at which step of its script:
//
//   follower     a second engine on the same database (a follower tab: offline, so it only edits, as Node has
//                no Web Locks and every engine would lead) edits a subscription while the leader's request
//                carrying it is in flight (test/node/engine.outbox-delivery.test.ts has the pattern).
//   lost-answer  the server handles an add and its answer never comes; another device changes that feed before
//                the retry (or, on gPodder, nothing does: a re-subscribe after an acknowledged unsubscribe).
//   last-copy    the page's last-chance copy (`onLastChance`) is sent as the page goes away (a crash), maybe with
//                the worker's own request in flight, then the next start (which may edit at once). Whenever the
//                page goes away (here or in lost-answer), the service worker's sync event may run first: its
//                engine starts with a push, and is stopped after a drawn time, its work done or not.
//   bulk         `addMany` of many feeds, or an OPML import, offline or online, maybe with a 413 on large
//                uploads; nothing lost, nothing doubled.
//
// A family that ran says so in the trace with a line starting `family <name>:`; the node tests
// (test/node/chaos.families-*.test.ts) run seeds known to reach each one and look for that line.
import { DOMParser as XmlDomParser } from '@xmldom/xmldom';
import { authHeader } from '../../src/auth-header.ts';
import type { LastChanceRequest } from '../../src/protocol.ts';
import type { AddManyReport, Auth } from '../../src/types.ts';
import type { SyncEngine } from '../../worker/index.ts';
import type { Prng } from './prng.ts';

/** The families a seed may run. */
export type Family = 'follower' | 'lost-answer' | 'last-copy' | 'bulk';

export const FAMILIES: readonly Family[] = ['follower', 'lost-answer', 'last-copy', 'bulk'];

/** How likely a seed is to run each family (once, at a step it draws). */
const CHANCE: Record<Family, number> = { follower: 0.45, 'lost-answer': 0.45, 'last-copy': 0.4, bulk: 0.35 };

/** The families a seed runs, by step (one family may share a step with another: they run in this order). */
export function drawFamilies(r: Prng, steps: number): Map<number, Family[]> {
  const out = new Map<number, Family[]>();
  for (const family of FAMILIES) {
    // Both draws always happen: one family's choice never shifts another's step.
    const on = r.chance(CHANCE[family]);
    const at = r.int(0, Math.max(0, steps - 1));
    if (on) out.set(at, [...(out.get(at) ?? []), family]);
  }
  return out;
}

/** The trace line's start that says a family ran (the node tests look for it). */
export const ran = (family: Family) => `family ${family}:`;

/** A short form of a copy's requests for the trace. */
export function describeCopy(copy: readonly LastChanceRequest[]): string {
  return copy.length ? copy.map((r) => `${r.method} ${decodeURIComponent(r.path)}${r.body ? ` ${r.body.length > 160 ? `${r.body.slice(0, 160)}…` : r.body}` : ''}`).join('; ') : 'nothing';
}

/**
 * Send the copy as the page does as it goes away (src/last-chance.ts): each request at once, to the base URL
 * with the credentials, nobody reading the answers. Resolves when every request has ended, however.
 */
export function sendCopy(copy: readonly LastChanceRequest[], baseUrl: string, auth: Auth, fetch: typeof globalThis.fetch): Promise<unknown> {
  const base = new URL(baseUrl.replace(/\/+$/, '') + '/');
  return Promise.all(
    copy.map((request) => {
      const headers: Record<string, string> = { ...request.headers };
      const credentials = authHeader(auth);
      if (credentials) headers[credentials[0]] = credentials[1];
      return fetch(new URL(request.path, base), { method: request.method, headers, body: request.body, keepalive: true, redirect: 'error' }).then(
        (response) => response.text(),
        () => undefined,
      );
    }),
  );
}

/** Entries an import or `addMany` must pass over (with a reason), never add. */
const JUNK = ['javascript:alert(1)', 'file:///etc/passwd', 'feeds/relative.xml', 'not a url', 'ftp://feeds.example/x.xml'];

/** A bulk list: `fresh` feeds, some of them twice, `known` feeds, and junk, shuffled by `r`. */
export function bulkList(r: Prng, fresh: readonly string[], known: readonly string[]): string[] {
  const list = [...fresh];
  for (let i = r.int(0, 3); i > 0 && fresh.length; i--) list.push(r.pick(fresh));
  for (let i = r.int(0, 2); i > 0 && known.length; i--) list.push(r.pick(known));
  for (let i = r.int(0, 2); i > 0; i--) list.push(r.pick(JUNK));
  for (let i = list.length - 1; i > 0; i--) {
    const j = r.int(0, i);
    [list[i], list[j]] = [list[j]!, list[i]!];
  }
  return list;
}

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');

/** An OPML file as players export one: a BOM, CRLF, categories, `xmlUrl` in another case here and there. */
export function opmlOf(r: Prng, urls: readonly string[]): string {
  const lines = ['\ufeff<?xml version="1.0" encoding="utf-8"?>', '<opml version="1.0">', '<head><title>Exported &amp; kept</title></head>', '<body>'];
  let open = false;
  urls.forEach((url, i) => {
    if (i % 7 === 0) {
      if (open) lines.push('</outline>');
      open = r.chance(0.6);
      if (open) lines.push(`<outline text="Category ${i}">`);
    }
    const attribute = r.pick(['xmlUrl', 'xmlUrl', 'xmlurl', 'XMLURL']);
    const type = r.pick([' type="rss"', '', ' type="RSS"']);
    lines.push(`  <outline${type} text="Feed ${i} &amp; more" ${attribute}="${escape(url)}"/>`);
  });
  if (open) lines.push('</outline>');
  lines.push('</body>', '</opml>', '');
  return lines.join('\r\n');
}

/** Node has no DOMParser: xmldom stands in for the page's (as test/node/opml.test.ts does), strict as browsers are. */
export function ensureDomParser(): void {
  const g = globalThis as { DOMParser?: unknown };
  if (g.DOMParser) return;
  g.DOMParser = class extends XmlDomParser {
    constructor() {
      super({
        onError: (level, message) => {
          if (level !== 'warning') throw new Error(message);
        },
      });
    }
  };
}

/** A 413 for uploads carrying more than `limit` feeds (OPA: a POST's `subscriptions`; gPodder: `add` and `remove`). */
export function tooLarge(limit: number, until: number) {
  return {
    name: 'bulk-413',
    until,
    match: (method: string, _url: URL, body: unknown) => {
      const b = (body ?? {}) as { subscriptions?: unknown[]; add?: unknown[]; remove?: unknown[] };
      return method === 'POST' && (b.subscriptions?.length ?? 0) + (b.add?.length ?? 0) + (b.remove?.length ?? 0) > limit;
    },
    answer: { status: 413, text: JSON.stringify({ code: 413, message: 'Request Entity Too Large' }), headers: { 'Content-Type': 'application/json' } },
  };
}

/**
 * What a bulk add's report must say, whatever the protocol (violations pushed): each new feed added once, nothing
 * taken that is not a feed URL of the catalog or the store. Returns the family's trace line.
 */
export function checkBulkReport(
  report: AddManyReport,
  how: { fresh: readonly string[]; known: readonly string[]; opml: boolean; entries: number; offline: boolean },
  violations: string[],
): string {
  const added = new Set(report.added);
  if (added.size !== report.added.length) violations.push(`bulk: a feed reported added twice: ${report.added.join(', ')}`);
  const missing = how.fresh.filter((url) => !added.has(url));
  if (missing.length) violations.push(`bulk: new feeds not reported added: ${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ` and ${missing.length - 3} more` : ''}`);
  const junk = [...report.added, ...report.alreadyThere].filter((url) => !/^https:\/\/feeds\.example\//.test(url) && !how.known.includes(url));
  if (junk.length) violations.push(`bulk: entries that are not feed URLs were taken: ${junk.join(', ')}`);
  return (
    `${ran('bulk')} ${how.opml ? 'importOpml' : 'addMany'} of ${how.entries} entries${how.offline ? ' offline' : ''}: ` +
    `${report.added.length} added, ${report.alreadyThere.length} already there, ${report.skipped.length} skipped`
  );
}

/**
 * The service worker's sync event after the page went away (Chromium wakes it when the network returns): an engine
 * made where a service worker's global has `clients` (so it starts with a push, pulling first only when a change
 * waits for the server's word or a hold runs), left to run `ms` of the simulation's time, then stopped wherever it
 * is (its event over, or the browser ending it mid-push). Says what it left.
 */
export async function serviceWorkerEvent(make: () => SyncEngine, sleep: (ms: number) => Promise<void>, ms: number): Promise<string> {
  const global = globalThis as { clients?: unknown };
  global.clients = {};
  let engine: SyncEngine;
  try {
    engine = make();
  } finally {
    delete global.clients;
  }
  const waiting = async () => {
    const { pending, pendingEpisodes } = await engine.status();
    return pending + pendingEpisodes;
  };
  const before = await waiting();
  await sleep(ms);
  const after = await waiting();
  const { phase, lastError } = await engine.status();
  await engine.close();
  return `${before} changes waited, ${after} still wait; ${phase}${lastError ? ` (last error: ${lastError.code})` : ''}`;
}
