// gPodder v2 and the Nextcloud gPodder Sync app behind the transport seam. A subscription is its feed URL.
import type { Auth } from '../../src/types.ts';
import type { Http } from '../http.ts';
import type { Transport } from '../transport.ts';
import { gpodderPaths } from './paths.ts';
import { pullGpodder } from './pull.ts';
import { sendGpodder } from './send.ts';

/** What the gPodder transport needs from the engine. */
export interface GpodderOptions {
  protocol: 'gpodder' | 'nextcloud';
  http: Http;
  /** The credentials in use now (the user's name is part of v2 paths). */
  auth(): Auth | undefined;
  account: string | undefined;
  device: string;
  /** Where the transport keeps its upload marks across restarts (the store's meta). */
  memo: { load(): Promise<unknown>; save(value: unknown): Promise<void> };
}

/** Create the gPodder (or Nextcloud) transport. */
export function createGpodderTransport(options: GpodderOptions): Transport {
  const { http, protocol } = options;
  const paths = () => gpodderPaths(protocol, options.auth(), options.account, options.device);
  let registered: Promise<void> | undefined;
  /**
   * Timestamps (s) of this device's uploads since its last pull: the next pull also asks since each of them.
   * Kept in the store, so a restart between an upload and the next pull does not lose them.
   */
  let marks: Promise<number[]> | undefined;
  const loadMarks = (): Promise<number[]> =>
    (marks ??= options.memo.load().then(
      (kept) => (Array.isArray(kept) ? kept.filter((m): m is number => typeof m === 'number') : []),
      () => [],
    ));
  const saveMarks = async (next: number[]): Promise<void> => {
    marks = Promise.resolve(next);
    await options.memo.save(next);
  };
  /** mygpo answers 404 to a device it does not know: register it once per engine, before pulling or sending. */
  const register = (): Promise<void> => {
    const path = paths().device;
    if (!path) return Promise.resolve();
    registered ??= http.request('POST', http.url(path), { caption: 'opa-sync', type: 'other' }, { ignoreBody: true }).then(
      () => undefined,
      (error: unknown) => {
        registered = undefined;
        throw error;
      },
    );
    return registered;
  };
  return {
    protocol,
    batching: 'all',
    guidChanges: false,
    guidFor: (feedUrl) => feedUrl,
    async pull(sink) {
      await register();
      const taken = await loadMarks();
      // A cursor held back re-reads the same window next time: its marks are still needed then.
      if (!(await pullGpodder(http, paths().pull, sink, taken))) return;
      // Uploads made while this pull ran stay marked for the next one.
      const left = (await loadMarks()).filter((m) => !taken.includes(m));
      if (taken.length) await saveMarks(left);
    },
    async send(items) {
      await register();
      const uploads: number[] = [];
      const outcomes = await sendGpodder(http, paths().upload, items, (timestamp) => uploads.push(timestamp));
      if (uploads.length) await saveMarks([...(await loadMarks()), ...uploads]);
      return outcomes;
    },
  };
}
