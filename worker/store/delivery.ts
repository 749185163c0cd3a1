// Whether a queued change may go now: the one rule for the push (tabs and the service worker) and the page's
// last copy, read from the change's stored delivery state only (see `StoredChange.sent`).
import type { StoredChange } from '../../src/schema.ts';

/** Whether sending a change twice is harmless: a PATCH of values or a DELETE is; an add (it re-subscribes) or a move is not. */
export const harmless = (c: StoredChange): boolean => c.kind !== 'add' && c.change?.guid === undefined;

/**
 * Whether a change may go now without the server's word: never handed out, harmless to repeat, or handed out
 * before the last of `pulls` completed pulls (one handed out before any count, as stores of old kept it).
 */
export const mayGo = (c: StoredChange, pulls: number): boolean => !c.sent || harmless(c) || !(pulls <= c.sent.pull);

/**
 * Whether a change may have left: handed out, or held in a page's last copy (which the page may send at any
 * moment, and whose fate the next start cannot know). Such a change is never folded away or into a new value of
 * itself: the server may hold what it said.
 */
export const mayHaveLeft = (c: StoredChange): boolean => c.sent !== undefined || c.copied === true;
