import type { Reply } from '../http.ts';
import { createAdminDispatch, need, num, sharedRoutes, str, strings, BadInput, type AdminBody, type AdminRoute } from '../admin-input.ts';
import { ForeignError } from '../foreign.ts';
import type { GpodderServer, ListTarget } from './types.ts';

/** What the admin route may drive: the server's controls without its lifecycle. */
export type GpodderControl = Omit<GpodderServer, 'url' | 'origin' | 'port' | 'close' | 'dialect' | 'users'>;

const target = (b: AdminBody): ListTarget => ({ user: str(b, 'user'), device: str(b, 'device') });

/** Create the `/__admin/...` handler of the gPodder server: no credentials, not logged, never faulted. */
export function createGpodderAdmin(control: GpodderControl): (method: string, path: string, text: string) => Reply {
  const routes: Record<string, AdminRoute> = {
    'POST /reset': () => control.reset(),
    'POST /seed': (b) => ({ urls: control.seed(num(b, 'n'), target(b)) }),
    // GET has no body: it reads the first user's account list; POST names a user and device.
    'GET /state': () => control.state(),
    'POST /state': (b) => control.state(target(b)),
    'GET /devices': () => control.devices(),
    'POST /devices': (b) => control.devices(str(b, 'user')),
    'POST /register': (b) =>
      control.registerDevice(need(str(b, 'device'), 'device is required'), { caption: str(b, 'caption'), type: str(b, 'type') }, str(b, 'user')),
    'POST /sync': (b) => {
      const groups = b.groups;
      if (!Array.isArray(groups) || !groups.every((g) => Array.isArray(g) && g.every((d) => typeof d === 'string'))) {
        throw new BadInput('groups must be a list of lists of device ids');
      }
      control.syncDevices(groups as string[][], str(b, 'user'));
    },
    'GET /timestamp': () => ({ timestamp: control.timestamp() }),
    'POST /foreign': (b) => control.foreign.upload({ add: strings(b, 'add'), remove: strings(b, 'remove') }, target(b)),
    // Another client's episode actions, each with its own device and time (a late upload of an old action is one call).
    'POST /episodes': (b) => {
      if (!Array.isArray(b.actions)) throw new BadInput('actions must be a list of episode actions');
      return control.foreign.actions(b.actions, str(b, 'user'));
    },
    // GET reads the first user's /api/2 store; POST names a user and a family ('api2' or 'nextcloud').
    'GET /episode-log': () => control.episodeLog(),
    'POST /episode-log': (b) => {
      const family = str(b, 'family');
      if (family !== undefined && family !== 'api2' && family !== 'nextcloud') throw new BadInput("family must be 'api2' or 'nextcloud'");
      return control.episodeLog({ user: str(b, 'user'), family });
    },
    // A reference-server extra (real gPodder servers serve no feeds): /__admin/feed/<encodeURIComponent(feed URL)>.
    'GET /feed': (_b, feedUrl) => {
      if (feedUrl === '') throw new BadInput('the feed URL goes in the path: /__admin/feed/<encoded feed URL>');
      return { podcast: feedUrl, episodes: control.feedEpisodes(feedUrl) };
    },
    ...sharedRoutes(control),
  };
  return createAdminDispatch(routes, (err): err is ForeignError => err instanceof ForeignError);
}
