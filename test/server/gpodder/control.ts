// The in-process handle tests drive the gPodder server with: data, devices, other clients' changes.
import { DEVICE_ID, deviceView, registerDevice, syncDevices, type Account, type Accounts, type Device } from './accounts.ts';
import { feedEpisodes } from './catalog.ts';
import { actionView } from './episode-store.ts';
import { uploadMygpoEpisodes } from './episodes-mygpo.ts';
import { uploadNextcloudEpisodes } from './episodes-nextcloud.ts';
import { uploadOpodsyncEpisodes } from './episodes-opodsync.ts';
import { readList, uploadAs } from './targets.ts';
import type { GpodderDialect, GpodderForeign, GpodderServer, ListTarget } from './types.ts';
import { ForeignError } from '../foreign.ts';
import type { Random } from '../random.ts';
import { seedFeeds } from '../seed.ts';

/** The data part of the controls (faults, log and lifecycle are the server's). */
export type DataControl = Pick<
  GpodderServer,
  'seed' | 'state' | 'subscribed' | 'registerDevice' | 'devices' | 'syncDevices' | 'timestamp' | 'foreign' | 'episodeLog' | 'feedEpisodes'
>;

/** Create the data controls over `accounts`, stamping writes with `now()`, seeding from the current `random()`. */
export function createDataControl(dialect: GpodderDialect, accounts: Accounts, random: () => Random, now: () => number): DataControl {
  const checkedId = (device: string): string => {
    if (!DEVICE_ID.test(device)) throw new ForeignError(400, 'Invalid device ID');
    return device;
  };
  // The account and (under mygpo) the device a target names; `create` registers a device on first use,
  // as an upload to it over HTTP would.
  const resolve = (target: ListTarget, create: boolean): { account: Account; device?: Device } => {
    const account = accounts.pick(target.user);
    if (target.device === undefined || dialect === 'opodsync') return { account };
    const device = create ? registerDevice(account, checkedId(target.device)) : account.devices.get(target.device);
    if (!device) throw new ForeignError(404, `no device ${target.device}`);
    return { account, device };
  };
  const list = (target: ListTarget = {}, create = false) => {
    const { account, device } = resolve(target, create);
    return readList(dialect, account, device);
  };

  const foreign: GpodderForeign = {
    upload(change, target = {}) {
      const { account, device } = resolve(target, true);
      const outcome = uploadAs(dialect, account, device, change, now());
      if (!outcome.ok) throw new ForeignError(400, outcome.message);
      return outcome.result;
    },
    add: (urls, target) => foreign.upload({ add: urls }, target),
    remove: (urls, target) => foreign.upload({ remove: urls }, target),
    actions(actions, user) {
      const account = accounts.pick(user);
      const at = now();
      if (dialect === 'opodsync') {
        const outcome = uploadOpodsyncEpisodes(account, actions, at);
        if (!outcome.ok) throw new ForeignError(outcome.status, outcome.message);
        return outcome.result;
      }
      // One process plays both servers under mygpo: another client's actions reach each, by its own rules.
      const outcome = uploadMygpoEpisodes(account, actions, at);
      const app = uploadNextcloudEpisodes(account, actions, at);
      if (!outcome.ok) throw new ForeignError(outcome.status, outcome.message);
      if (!app.ok) throw new ForeignError(app.status, `Nextcloud paths: ${app.message}`);
      return outcome.result;
    },
  };

  return {
    seed(n, target) {
      const held = new Set(list(target, true).rows().map((r) => r.url));
      const urls = seedFeeds(random(), n, (url) => held.has(url)).map((f) => f.feedUrl);
      foreign.add(urls, target);
      return urls;
    },
    state: (target) => list(target).rows(),
    subscribed: (target) => list(target).rows().filter((r) => r.subscribed).map((r) => r.url),
    registerDevice(device, update, user) {
      registerDevice(accounts.pick(user), checkedId(device), update);
    },
    devices: (user) => [...accounts.pick(user).devices.values()].map(deviceView),
    syncDevices(groups, user) {
      const account = accounts.pick(user);
      for (const id of groups.flat()) registerDevice(account, checkedId(id));
      syncDevices(account, groups, [], now());
    },
    timestamp: () => Math.floor(now() / 1000),
    foreign,
    episodeLog({ user, family = 'api2' } = {}) {
      const { episodes } = accounts.pick(user);
      const store = dialect === 'mygpo' && family === 'nextcloud' ? episodes.rows : episodes.log;
      return store.records.map(actionView);
    },
    feedEpisodes,
  };
}
