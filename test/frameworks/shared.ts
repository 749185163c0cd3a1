// What the four framework apps share: the client (options from the URL, so a reload keeps them), its store, and
// a render log the browser test reads: each time the list's row count changes, and when a row shows a value.
import { createSyncClient, type ClientOptions, type SyncClient, type SyncStore } from 'opa-sync';

/** What a framework app page exposes to the test. */
export interface FrameworkPage {
  client: SyncClient;
  store: SyncStore;
  /** Each change of the rendered list's row count (`#list > li`), the first being the list's first paint. */
  renders: { rows: number; at: number }[];
  /** Resolves with the time (ms since the epoch, sub-ms) the DOM first shows `guid` with that subscribed flag. */
  shows(guid: string, subscribed: boolean): Promise<number>;
  /** `performance.timeOrigin + performance.now()`: a clock tabs of one browser share. */
  now(): number;
  /** Snapshots the store delivered, the one `subscribe` gives at once included. */
  snapshots: number;
}

declare global {
  interface Window {
    fw: FrameworkPage;
  }
}

const options = JSON.parse(new URLSearchParams(location.search).get('options') ?? '{}') as ClientOptions;
export const client = createSyncClient(options);
/** The store every app renders. */
export const store = client.store();

const now = () => performance.timeOrigin + performance.now();
const renders: FrameworkPage['renders'] = [];
const checks = new Set<() => void>();
const shown = (guid: string, subscribed: boolean) =>
  document.querySelector(`#list > li[data-guid="${CSS.escape(guid)}"][data-subscribed="${subscribed}"]`) !== null;

// Installed before the app mounts (this module runs first): the first record is the list's first paint.
new MutationObserver(() => {
  const list = document.getElementById('list');
  if (list && renders.at(-1)?.rows !== list.children.length) renders.push({ rows: list.children.length, at: now() });
  for (const check of [...checks]) check();
}).observe(document.getElementById('app')!, { subtree: true, childList: true, attributes: true, characterData: true });

window.fw = {
  client,
  store,
  renders,
  now,
  snapshots: 0,
  shows: (guid, subscribed) =>
    new Promise((resolve) => {
      const check = () => {
        if (!shown(guid, subscribed)) return;
        checks.delete(check);
        resolve(now());
      };
      checks.add(check);
      check();
    }),
};

store.subscribe(() => void window.fw.snapshots++);
