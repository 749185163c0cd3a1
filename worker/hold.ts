// When a queued change may go again. Waits are stored as device times (they must survive a reload), and a
// device clock steps: a hold is never allowed to last longer than it was set for, whatever the clock does.
import type { StoredChange } from '../src/schema.ts';

/** A wait set on a queued change: until when, and when it was set (both in the engine's steady device time). */
export interface Hold {
  notBefore: number;
  /** Until when even a forced push waits (see `StoredChange.serverHold`). */
  serverHold?: number;
  heldAt: number;
}

/**
 * Whether a wait until `until`, set at `heldAt`, is over at `now`: it elapsed, or `now` is before the moment it
 * was set (the clock went back, or another tab's clock runs behind): then it is over rather than stretched.
 */
export function holdOver(until: number | undefined, heldAt: number | undefined, now: number): boolean {
  if (until === undefined || until <= now) return true;
  return heldAt !== undefined && now < heldAt;
}

/** Whether a change may be sent at `now`; a forced push skips the backoff but never `serverHold`. */
export function isReady(change: Pick<StoredChange, 'notBefore' | 'serverHold' | 'heldAt'>, now: number, force: boolean): boolean {
  if (holdOver(change.notBefore, change.heldAt, now)) return true;
  return force && holdOver(change.serverHold, change.heldAt, now);
}

/** When a change that is waiting is due next (never before `now + 1`). */
export function dueAt(change: Pick<StoredChange, 'notBefore' | 'heldAt'>, now: number): number {
  return holdOver(change.notBefore, change.heldAt, now) ? now + 1 : change.notBefore;
}
