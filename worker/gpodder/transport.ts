// gPodder v2 and the Nextcloud gPodder Sync app behind the transport seam. A subscription is its feed URL.
import type { Auth } from '../../src/types.ts';
import type { Http } from '../http.ts';
import type { Transport } from '../transport.ts';
import { createEpisodeTransport, episodePaths } from './episodes.ts';
import { gpodderPaths } from './paths.ts';
import { pullGpodder, type PullMemo } from './pull.ts';
import { planGpodder, sendGpodder } from './send.ts';

/** What the gPodder transport needs from the engine. */
export interface GpodderOptions {
  protocol: 'gpodder' | 'nextcloud';
  http: Http;
  /** The credentials in use now (the user's name is part of v2 paths). */
  auth(): Auth | undefined;
  account: string | undefined;
  device: string;
  /** This device's clock (ms): how far the server's clock may move between two pulls. */
  now(): number;
  /** Where the transport keeps its upload marks across restarts (the store's meta). */
  memo: { load(): Promise<unknown>; save(value: unknown): Promise<void> };
}

/** What the transport keeps in the store: what pulls keep between them (see `pullGpodder`). */
type Memo = PullMemo & { marks: number[] };

/** Read a kept memo (a bare list of marks, as kept before the offset existed, is the marks). */
function readMemo(kept: unknown): Memo {
  const finite = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
  const numbers = (value: unknown) => (Array.isArray(value) ? value.filter(finite) : []);
  if (Array.isArray(kept)) return { marks: numbers(kept), offset: 0 };
  const o = typeof kept === 'object' && kept !== null ? (kept as Record<string, unknown>) : {};
  const memo: Memo = { marks: numbers(o.marks), offset: finite(o.offset) ? o.offset : 0 };
  if (finite(o.behind)) memo.behind = o.behind;
  if (o.full === true) memo.full = true;
  const last = o.last as Record<string, unknown> | undefined;
  if (typeof last === 'object' && last !== null && finite(last.timestamp) && finite(last.at)) memo.last = { timestamp: last.timestamp, at: last.at };
  return memo;
}

/** Create the gPodder (or Nextcloud) transport. */
export function createGpodderTransport(options: GpodderOptions): Transport {
  const { http, protocol } = options;
  const paths = () => gpodderPaths(protocol, options.auth(), options.account, options.device);
  let registered: Promise<void> | undefined;
  let registeredWith: Auth | undefined;
  /**
   * Timestamps (s) of this device's uploads since its last pull: the next pull also asks since each of them;
   * and the offset (ms) that orders the server's entries after its clock went back (see `pullGpodder`). Kept
   * in the store, so a restart between an upload and the next pull does not lose them. Read from the store
   * each time, never cached: a `clear()` (here or in another tab) wipes them with everything else.
   */
  const loadMemo = (): Promise<Memo> => options.memo.load().then(readMemo, () => ({ marks: [], offset: 0 }));
  const saveMemo = (next: Memo): Promise<void> => options.memo.save(next);
  /**
   * mygpo answers 404 to a device it does not know: register it once per engine, before pulling or sending. The
   * caption is the app's device id (opodsync replaces it with whatever this call sends, none included).
   */
  const register = (): Promise<void> => {
    const { device, login } = paths();
    const auth = options.auth();
    // New credentials (setAuth) log in again.
    if (auth !== registeredWith) registered = undefined;
    registeredWith = auth;
    if (!device) return Promise.resolve();
    // A session: one login with the password, whose cookie (the browser keeps it) then goes instead of it.
    registered ??= (auth?.type === 'session' ? http.request('POST', http.url(login!), undefined, { ignoreBody: true, auth: { ...auth, type: 'basic' } }) : Promise.resolve())
      .then(() => http.request('POST', http.url(device), { caption: options.device, type: 'other' }, { ignoreBody: true }))
      .then(
      () => undefined,
      (error: unknown) => {
        registered = undefined;
        throw error;
      },
    );
    return registered;
  };
  const user = () => {
    const auth = options.auth();
    return auth?.type === 'basic' ? auth.username : (options.account ?? 'current');
  };
  return {
    protocol,
    episodes: createEpisodeTransport(http, () => episodePaths(protocol, user()), register),
    batching: 'all',
    guidChanges: false,
    guidFor: (feedUrl) => feedUrl,
    async pull(sink) {
      await register();
      const memo = await loadMemo();
      const result = await pullGpodder(http, paths().pull, sink, memo, options.now());
      // A cursor held back re-reads the same window next time: its marks are still needed then.
      if (!result.committed) return;
      // Uploads made while this pull ran stay marked for the next one.
      const left = (await loadMemo()).marks.filter((m) => !memo.marks.includes(m));
      await saveMemo({ ...result.memo, marks: left });
    },
    plan: (items) => planGpodder(paths().upload, items),
    async send(request) {
      await register();
      const uploads: number[] = [];
      const outcomes = await sendGpodder(http, request, (timestamp) => uploads.push(timestamp), (await loadMemo()).offset);
      if (uploads.length) {
        const kept = await loadMemo();
        await saveMemo({ ...kept, marks: [...kept.marks, ...uploads] });
      }
      return outcomes;
    },
  };
}
