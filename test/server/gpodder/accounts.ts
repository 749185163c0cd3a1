import { createActionLog, createActionRows, type ActionLog, type ActionRows } from './episode-store.ts';
import { createList, type SubscriptionList } from './list.ts';
import type { GpodderDeviceView, WireDeviceUpdate } from './types.ts';

/** A registered device and (under mygpo) its own subscription list. */
export interface Device {
  readonly id: string;
  caption: string;
  type: string;
  readonly list: SubscriptionList;
}

/** One user: password, devices, sync groups, and the one list opodsync and the Nextcloud paths keep. */
export interface Account {
  readonly name: string;
  readonly password: string;
  readonly devices: Map<string, Device>;
  /** Sync groups (mygpo), each of two or more device ids. */
  groups: string[][];
  readonly list: SubscriptionList;
  /** Episode actions: `log` for `/api/2` (and every path under opodsync), `rows` for the Nextcloud app's paths. */
  readonly episodes: { readonly log: ActionLog; readonly rows: ActionRows };
}

/** The server's users. */
export interface Accounts {
  get(name: string): Account | undefined;
  /** `name`'s account, or the first configured one when `name` is omitted; throws on an unknown name. */
  pick(name?: string): Account;
  all(): Account[];
  /** Forget every device, group and change. */
  clear(): void;
}

/** A device id as mygpo and opodsync accept it. */
export const DEVICE_ID = /^[\w.-]+$/;

/** Create the accounts for `users` (name to password), empty. */
export function createAccounts(users: Record<string, string>): Accounts {
  let accounts = new Map<string, Account>();
  const clear = (): void => {
    accounts = new Map(
      Object.entries(users).map(([name, password]) => [
        name,
        { name, password, devices: new Map(), groups: [], list: createList(), episodes: { log: createActionLog(), rows: createActionRows() } },
      ]),
    );
  };
  clear();
  return {
    get: (name) => accounts.get(name),
    pick(name) {
      const account = name === undefined ? accounts.values().next().value : accounts.get(name);
      if (!account) throw new Error(`no user ${JSON.stringify(name)}`);
      return account;
    },
    all: () => [...accounts.values()],
    clear,
  };
}

/** Create or update a device (caption and type keep their old values when not given). */
export function registerDevice(account: Account, id: string, update: WireDeviceUpdate = {}): Device {
  let device = account.devices.get(id);
  if (!device) {
    device = { id, caption: '', type: 'other', list: createList() };
    account.devices.set(id, device);
  }
  if (update.caption !== undefined) device.caption = update.caption;
  if (update.type !== undefined) device.type = update.type;
  return device;
}

/** The device and every device synchronised with it. */
export function groupOf(account: Account, device: Device): Device[] {
  const group = account.groups.find((g) => g.includes(device.id));
  return group ? group.map((id) => account.devices.get(id)!) : [device];
}

/**
 * mygpo's sync-devices: join each group in `synchronize` (merging with groups its devices are in
 * already), then take the devices in `stop` out of theirs. Grouped devices get every subscription
 * any of them has, stamped `at`, so they read alike from then on.
 */
export function syncDevices(account: Account, synchronize: string[][], stop: string[], at: number): void {
  for (const wanted of synchronize) {
    const touching = account.groups.filter((g) => g.some((id) => wanted.includes(id)));
    const merged = [...new Set([...touching.flat(), ...wanted])];
    account.groups = [...account.groups.filter((g) => !touching.includes(g)), merged];
  }
  account.groups = account.groups.map((g) => g.filter((id) => !stop.includes(id))).filter((g) => g.length > 1);
  for (const group of account.groups) {
    const members = group.map((id) => account.devices.get(id)!);
    const union = new Set(members.flatMap((d) => d.list.rows().filter((r) => r.subscribed).map((r) => r.url)));
    for (const d of members) for (const url of union) d.list.set(url, true, at, false);
  }
}

/** The test-facing view of a device. */
export function deviceView(d: Device): GpodderDeviceView {
  return { id: d.id, caption: d.caption, type: d.type, subscriptions: d.list.rows().filter((r) => r.subscribed).length };
}
