// The `play` action an episode row uploads, and the one rule that keeps it from repeating an earlier upload:
// mygpo silently drops an action equal in (episode, device, action, started, position) to one it holds, whatever
// its time, so played → unplayed → played → unplayed would end played there. `started` (where this stretch of
// listening began) is ours to choose: it moves by a second until the pair is one this device never sent.
import type { StoredEpisode } from '../../src/schema.ts';
import { toPlay } from './register.ts';

/** How many (started, position) pairs a row remembers (an episode listened to for hours uploads a few hundred). */
export const SENT_PAIRS = 256;

/** The values of the `play` action that carries a row's state. */
export interface PlayValues {
  started: number;
  position: number;
  total?: number;
}

/**
 * The play a row uploads: its position and total (register.ts `toPlay`), and `started` = where the pending
 * stretch began (the position before it, when not past this one), else the position itself; moved down a
 * second at a time (then up, past a play at 0) while the pair was sent before.
 */
export function uploadPlay(row: StoredEpisode): PlayValues {
  const { position, total } = toPlay(row);
  const from = row.pending?.from;
  const natural = from !== undefined && from <= position ? Math.max(0, Math.round(from)) : position;
  const taken = new Set((row.sent ?? []).filter(([, p]) => p === position).map(([s]) => s));
  const play: PlayValues = { started: freeStarted(natural, taken), position };
  if (total !== undefined) play.total = total;
  return play;
}

/** The first `started` not taken: down toward 0 (it stays at or before the position), then up past `natural`. */
function freeStarted(natural: number, taken: Set<number>): number {
  for (let s = natural; s >= 0; s--) if (!taken.has(s)) return s;
  for (let s = natural + 1; ; s++) if (!taken.has(s)) return s;
}

/** The pairs a row has sent once `uploaded` (the row as it was sent) went out: newest last, the oldest forgotten. */
export function withSent(sent: StoredEpisode['sent'], uploaded: StoredEpisode): NonNullable<StoredEpisode['sent']> {
  const { started, position } = uploadPlay(uploaded);
  const kept = (sent ?? []).filter(([s, p]) => s !== started || p !== position);
  kept.push([started, position]);
  return kept.slice(-SENT_PAIRS);
}
