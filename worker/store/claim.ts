// Whose store this is. A store belongs to one server, account and protocol (its binding, in `meta`), and is
// wiped by `clear()`, which gives it a new epoch. Every transaction of the engine carries a guard saying whose
// store it means, checked inside that transaction (see `createStoreCore`): a write never lands in a store
// that was wiped or that another account holds, however the tabs interleave.
import { SyncError } from '../../src/errors.ts';

/** What a store is bound to: one server and, when given, one account and protocol. */
export interface Binding {
  server: string;
  account?: string;
  /** Absent in stores written before protocols existed: those are Open Podcast API stores. */
  protocol?: string;
}

/** What a transaction checks about the store it runs in before anything it wrote may commit. */
export type Guard =
  /** A read: another's store is refused; an unbound one is read as it is (empty after `clear()`), claimed by no one. */
  | { kind: 'read'; binding: Binding }
  /**
   * A local edit (or a binding): an unbound store becomes this binding's in the same transaction; another's is
   * refused. A background run's (`background`) does not take a store a `clear()` signed out: `SignedOut`.
   */
  | { kind: 'claim'; binding: Binding; background?: boolean }
  /** A run's reads and writes: only in the store the run began with (same epoch); after a `clear()` nothing. */
  | { kind: 'run'; binding: Binding; epoch: string };

/** The store's owner as recorded in `meta`. */
export interface Owner {
  binding: Binding | undefined;
  epoch: string | undefined;
  /** Wiped by `clear()` and not used by the app since. */
  signedOut?: boolean;
}

/**
 * A background run found the store signed out (another tab's or this one's `clear()`): it does nothing, so a
 * sign-out sticks until the app itself uses the store again (an edit, `sync()`).
 */
export class SignedOut extends SyncError {
  constructor(dbName: string) {
    super('closed', `database "${dbName}" was cleared (signed out): background sync waits for the app to use it`);
  }
}

const protocolOf = (binding: Binding): string => binding.protocol ?? 'opa';

/** Whether a store bound to `stored` holds another server's, account's or protocol's data than `binding`'s. */
export function clash(stored: Binding, binding: Binding): boolean {
  const accountClash = binding.account !== undefined && stored.account !== undefined && stored.account !== binding.account;
  return stored.server !== binding.server || accountClash || protocolOf(stored) !== protocolOf(binding);
}

/** The `account-mismatch` error for a store bound to `stored`. */
export function mismatch(dbName: string, stored: Binding): SyncError {
  const who = `${stored.server}${stored.account ? ` (account ${stored.account})` : ''}${stored.protocol ? ` over ${stored.protocol}` : ''}`;
  return new SyncError('account-mismatch', `database "${dbName}" holds data of ${who}; call clear() to reuse it`);
}

/**
 * What a guard says of the store's owner: an error to abort the transaction with, `claim` when the binding
 * must be recorded first (an unbound store, or one bound before its account was known), else nothing.
 */
export function judge(guard: Guard, owner: Owner, dbName: string): SyncError | 'claim' | undefined {
  const stored = owner.binding;
  if (guard.kind === 'run') {
    if (owner.epoch === guard.epoch) return undefined;
    if (stored && clash(stored, guard.binding)) return mismatch(dbName, stored);
    return new SyncError('closed', `database "${dbName}" was cleared during this sync (clear() in another context): nothing more was written`);
  }
  if (stored && clash(stored, guard.binding)) return mismatch(dbName, stored);
  if (guard.kind === 'read') return undefined;
  if (!stored && owner.signedOut && guard.kind === 'claim' && guard.background) return new SignedOut(dbName);
  const upgrade = stored !== undefined && guard.binding.account !== undefined && stored.account === undefined;
  return !stored || upgrade || owner.epoch === undefined ? 'claim' : undefined;
}
