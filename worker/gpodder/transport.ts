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
}

/** Create the gPodder (or Nextcloud) transport. */
export function createGpodderTransport(options: GpodderOptions): Transport {
  const { http, protocol } = options;
  const paths = () => gpodderPaths(protocol, options.auth(), options.account, options.device);
  let registered: Promise<void> | undefined;
  /** mygpo answers 404 to a device it does not know: register it once per engine, before pulling or sending. */
  const register = (): Promise<void> => {
    const path = paths().device;
    if (!path) return Promise.resolve();
    registered ??= http.request('POST', http.url(path), { caption: 'opa-sync', type: 'other' }).then(
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
      await pullGpodder(http, paths().pull, sink);
    },
    async send(items) {
      await register();
      return sendGpodder(http, paths().upload, items);
    },
  };
}
