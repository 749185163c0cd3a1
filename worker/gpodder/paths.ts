// Where each gPodder call goes: the v2 API names the user and the device; the Nextcloud app names neither.
import type { Auth } from '../../src/types.ts';

/** The endpoints of one dialect. */
export interface GpodderPaths {
  /** Pull and upload of subscription changes. */
  pull: string;
  upload: string;
  /** Device registration (v2 only). */
  device?: string;
  /** The session login (v2 only). */
  login?: string;
}

const seg = (value: string) => encodeURIComponent(value);

/** The paths for this protocol, user and device (the user comes from the credentials in use). */
export function gpodderPaths(protocol: 'gpodder' | 'nextcloud', auth: Auth | undefined, account: string | undefined, device: string): GpodderPaths {
  if (protocol === 'nextcloud') {
    return { pull: 'index.php/apps/gpoddersync/subscriptions', upload: 'index.php/apps/gpoddersync/subscription_change/create' };
  }
  // opodsync and mygpo take the logged-in user's name; opodsync also takes "current".
  const user = auth?.type === 'basic' ? auth.username : (account ?? 'current');
  const list = `api/2/subscriptions/${seg(user)}/${seg(device)}.json`;
  return { pull: list, upload: list, device: `api/2/devices/${seg(user)}/${seg(device)}.json`, login: `api/2/auth/${seg(user)}/login.json` };
}
