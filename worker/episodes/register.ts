// Listening state as last-writer-wins registers: each field carries the time of the change on the device that
// made it, compared in whole seconds (the wire's unit). Every change is a `play` action: it sets the position
// and says whether the episode is played (position at the total), and the total when known. Pure functions:
// the store applies what they return.

/** One field's value and the time (epoch ms) of the change that set it. */
export interface Register<T> {
  value: T;
  at: number;
}

/** An episode's listening state, field by field. */
export interface EpisodeFields {
  position?: Register<number>;
  total?: Register<number>;
  played?: Register<boolean>;
}

/** What one change says (a local call or a remote action); absent fields are not touched. */
export interface FieldChange {
  position?: number;
  total?: number;
  played?: boolean;
}

/** A field's name. */
export type FieldKey = keyof FieldChange;

const KEYS: readonly FieldKey[] = ['position', 'total', 'played'];

/** The whole second of a stamp (epoch ms): what the wire carries, so what every comparison uses. */
export const secondOf = (at: number): number => Math.floor(at / 1000);

/**
 * Apply a change stamped `at` to every field it names where it wins: a newer second replaces what the field
 * holds, an older one never does; in the same second `tie(key)` decides (a local change wins: the listener just
 * made it; a remote one wins unless the field holds a pending local change, which would otherwise lose to the
 * server's copy of what it replaces). A tie won with the value already held changes nothing (an echo of our own
 * upload). Returns the new fields and the names of those that changed.
 */
export function applyChange(
  fields: EpisodeFields,
  change: FieldChange,
  at: number,
  tie: (key: FieldKey) => boolean,
): { fields: EpisodeFields; changed: FieldKey[] } {
  const next: EpisodeFields = { ...fields };
  const changed: FieldKey[] = [];
  for (const key of KEYS) {
    const value = change[key];
    if (value === undefined) continue;
    const held = fields[key];
    if (held) {
      const [mine, theirs] = [secondOf(at), secondOf(held.at)];
      if (mine < theirs || (mine === theirs && (!tie(key) || (held.value === value && held.at >= at)))) continue;
    }
    (next as Record<FieldKey, Register<unknown>>)[key] = { value, at };
    changed.push(key);
  }
  return { fields: next, changed };
}

/** The time of the newest change in the fields (0 when none). */
export function changedAt(fields: EpisodeFields): number {
  return Math.max(fields.position?.at ?? 0, fields.total?.at ?? 0, fields.played?.at ?? 0);
}

/**
 * What a `play` action says (a pulled one, or a local `setProgress`): the position (clamped to the length), the
 * total when it carries one, and played = the position reached the length: its own, else the last known one
 * (`known`). Without any length it is not played: a position of an unknown length cannot be its end. So a newer
 * play short of the end un-plays, whoever made it; a play at 0 is "unplayed" (the README says why `new` is not).
 */
export function fromPlay(position: number, total: number | undefined, known?: number): FieldChange {
  const length = total ?? known;
  const at = length === undefined ? position : Math.min(position, length);
  const change: FieldChange = { position: at, played: length !== undefined && at >= length };
  if (total !== undefined) change.total = total;
  return change;
}

/**
 * The `play` action that carries the fields' state: the position, and the total only when one is known (a
 * made-up one would come back from the server as the episode's length). Played is position = total; a state
 * not played whose position reached a total learned later goes a second short of it, so no one reads it as played.
 */
export function toPlay(fields: EpisodeFields): { position: number; total?: number } {
  const position = Math.max(0, Math.round(fields.position?.value ?? 0));
  if (!fields.total) return { position };
  const total = Math.round(fields.total.value);
  if (fields.played?.value === true) return { position: total, total };
  return { position: Math.min(position, total - 1), total };
}
