// What `--data` keeps of the gPodder server: every account's devices, sync groups, lists (their whole
// change history) and episode actions. Sessions, faults, latency and the request log are not kept.
import type { Accounts } from './accounts.ts';
import { registerDevice } from './accounts.ts';
import type { ActionRecord } from './episode-store.ts';
import { repeatKey } from './episodes-mygpo.ts';
import type { Change, SubscriptionList } from './list.ts';
import type { GpodderDialect } from './types.ts';

/** One account as a data file keeps it (the password stays in the server's options). */
interface AccountState {
  name: string;
  devices: { id: string; caption: string; type: string; changes: Change[] }[];
  groups: string[][];
  changes: Change[];
  log: ActionRecord[];
  rows: ActionRecord[];
}

/** The gPodder server's kept state. */
export interface GpodderState {
  dialect: GpodderDialect;
  random: number;
  accounts: AccountState[];
}

/** The state of `accounts` now. */
export function snapshot(dialect: GpodderDialect, accounts: Accounts, random: number): GpodderState {
  return {
    dialect,
    random,
    accounts: accounts.all().map((a) => ({
      name: a.name,
      devices: [...a.devices.values()].map((d) => ({ id: d.id, caption: d.caption, type: d.type, changes: [...d.list.changes()] })),
      groups: a.groups.map((g) => [...g]),
      changes: [...a.list.changes()],
      log: [...a.episodes.log.records],
      rows: [...a.episodes.rows.records],
    })),
  };
}

const replay = (list: SubscriptionList, changes: Change[]): void => {
  for (const c of changes) list.set(c.url, c.subscribed, c.at, true);
};

/** Put a kept state into freshly cleared `accounts`; accounts no longer configured are left out. */
export function restore(state: GpodderState, dialect: GpodderDialect, accounts: Accounts): void {
  if (state.dialect !== dialect) throw new Error(`the data file holds a ${state.dialect} server's state, not ${dialect}'s`);
  for (const kept of state.accounts) {
    const account = accounts.get(kept.name);
    if (!account) continue;
    for (const d of kept.devices) replay(registerDevice(account, d.id, { caption: d.caption, type: d.type }).list, d.changes);
    account.groups = kept.groups;
    replay(account.list, kept.changes);
    // The mygpo log's repeat filter is rebuilt from the actions themselves.
    for (const r of kept.log) account.episodes.log.append(r, dialect === 'mygpo' ? repeatKey(r) : undefined);
    for (const r of kept.rows) account.episodes.rows.save(r);
  }
}
