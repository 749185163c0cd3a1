// Which subscription lists a read or a write reaches: per device under mygpo, one per user under opodsync.
import { groupOf, type Account, type Device } from './accounts.ts';
import type { SubscriptionList } from './list.ts';
import type { GpodderDialect } from './types.ts';
import { uploadMygpo, uploadOpodsync, type UploadOutcome } from './upload.ts';

/**
 * The lists a write reaches. mygpo: the device and its sync group; with no device, every device
 * and the user's list (a subscription made on the website). opodsync: the user's one list.
 */
export function writeLists(dialect: GpodderDialect, account: Account, device?: Device): SubscriptionList[] {
  if (dialect === 'opodsync') return [account.list];
  if (device) return groupOf(account, device).map((d) => d.list);
  return [...[...account.devices.values()].map((d) => d.list), account.list];
}

/** The list a read shows: the device's under mygpo, else the user's. */
export function readList(dialect: GpodderDialect, account: Account, device?: Device): SubscriptionList {
  return dialect === 'mygpo' && device ? device.list : account.list;
}

/** An `/api/2` upload from `device` (or the whole account) as the dialect's server handles it. */
export function uploadAs(dialect: GpodderDialect, account: Account, device: Device | undefined, input: unknown, at: number): UploadOutcome {
  return dialect === 'mygpo'
    ? uploadMygpo(input, writeLists(dialect, account, device), at)
    : uploadOpodsync(input, account.list, at);
}
