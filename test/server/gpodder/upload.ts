// What each server does with an uploaded `{add, remove}`: which URLs it stores, how, and what it answers.
import type { SubscriptionList } from './list.ts';
import { sanitizeFeedUrl } from './sanitize.ts';
import type { WireUploadResult } from './types.ts';
import { isObject } from '../validate.ts';

/** The answer to an upload, or the 400 that refuses all of it (nothing stored). */
export type UploadOutcome = { ok: true; result: WireUploadResult } | { ok: false; message: string };

const refuse = (message: string): UploadOutcome => ({ ok: false, message });
const seconds = (ms: number): number => Math.floor(ms / 1000);

/** The `add` and `remove` lists when both are absent or lists of strings; undefined otherwise. */
function lists(input: unknown): { add: string[]; remove: string[] } | undefined {
  if (!isObject(input)) return undefined;
  const { add = [], remove = [] } = input;
  const ok = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');
  return ok(add) && ok(remove) ? { add, remove } : undefined;
}

/** Write the adds, then the removes, to every list. */
function store(targets: SubscriptionList[], add: string[], remove: string[], at: number, always: boolean): void {
  for (const list of targets) {
    for (const url of add) list.set(url, true, at, always);
    for (const url of remove) list.set(url, false, at, always);
  }
}

/**
 * mygpo: a URL in both lists refuses the request; every URL is sanitised and each rewrite reported
 * (to "" when refused, and then ignored); a remove whose sanitised URL is also added is dropped.
 */
export function uploadMygpo(input: unknown, targets: SubscriptionList[], at: number): UploadOutcome {
  const parsed = lists(input);
  if (!parsed) return refuse('add and remove must be lists of URLs');
  // Empty strings are dropped unreported, as mygpo's filter(None, ...) does.
  const add = parsed.add.filter(Boolean);
  const remove = parsed.remove.filter(Boolean);
  const both = add.filter((url) => remove.includes(url));
  if (both.length > 0) return refuse(`can not add and remove '[${both.map((u) => `'${u}'`).join(', ')}]' at the same time`);
  const sent = [...add, ...remove];
  const clean = sent.map(sanitizeFeedUrl);
  const update_urls = sent.flatMap((url, i): [string, string][] => (url === clean[i] ? [] : [[url, clean[i]]]));
  const added = clean.slice(0, add.length).filter(Boolean);
  const removed = clean.slice(add.length).filter((url) => url && !added.includes(url));
  store(targets, added, removed, at, false);
  return { ok: true, result: { timestamp: seconds(at), update_urls } };
}

const OPODSYNC_URL = /^https?:\/\/[^/]+/;

/**
 * opodsync: one URL not matching `^https?://[^/]+` refuses the whole request; nothing is rewritten;
 * every URL is re-stamped even when its state does not change; a URL in both lists ends removed.
 * Lists that are not lists are ignored, and so is a body that is not an object.
 */
export function uploadOpodsync(input: unknown, target: SubscriptionList, at: number): UploadOutcome {
  const field = (key: string): unknown[] => (isObject(input) && Array.isArray(input[key]) ? (input[key] as unknown[]) : []);
  const add = field('add');
  const remove = field('remove');
  for (const url of [...add, ...remove]) {
    if (typeof url !== 'string' || !OPODSYNC_URL.test(url)) return refuse(`Invalid URL: ${typeof url === 'string' ? url : JSON.stringify(url)}`);
  }
  store([target], add as string[], remove as string[], at, true);
  return { ok: true, result: { timestamp: seconds(at), update_urls: [] } };
}

/** The Nextcloud gPodder Sync app: stores what it is sent as it is, re-stamped; removes last; `{timestamp}` only. */
export function uploadNextcloudApp(input: unknown, target: SubscriptionList, at: number): UploadOutcome {
  const parsed = lists(input);
  if (!parsed) return refuse('add and remove must be lists of URLs');
  store([target], parsed.add, parsed.remove, at, true);
  return { ok: true, result: { timestamp: seconds(at) } };
}
