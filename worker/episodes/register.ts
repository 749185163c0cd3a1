// Listening state as last-writer-wins registers: each field carries the time of the change on the device that
// made it, and a value replaces another only when newer. Pure functions: the store applies what they return.

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

/** Apply a change made at `at` to every field it names, where it is newer than what the field holds. */
export function applyChange(fields: EpisodeFields, change: FieldChange, at: number): EpisodeFields {
  const next: EpisodeFields = { ...fields };
  const set = <K extends keyof EpisodeFields>(key: K, value: NonNullable<EpisodeFields[K]>['value'] | undefined) => {
    if (value === undefined) return;
    const held = fields[key];
    // A tie goes to the greater value (true over false), whatever the order the two arrive in, so every device
    // settles on the same one; a replayed action (our own echo, a second copy) changes nothing.
    if (held && (held.at > at || (held.at === at && !(value > held.value)))) return;
    next[key] = { value, at } as EpisodeFields[K];
  };
  set('position', change.position);
  set('total', change.total);
  set('played', change.played);
  return next;
}

/** Whether two field sets hold the same values and times (a merge that changes nothing writes nothing). */
export function sameFields(a: EpisodeFields, b: EpisodeFields): boolean {
  const eq = (x?: Register<unknown>, y?: Register<unknown>) => x === y || (!!x && !!y && x.value === y.value && x.at === y.at);
  return eq(a.position, b.position) && eq(a.total, b.total) && eq(a.played, b.played);
}

/** The time of the newest change in the fields (0 when none). */
export function changedAt(fields: EpisodeFields): number {
  return Math.max(fields.position?.at ?? 0, fields.total?.at ?? 0, fields.played?.at ?? 0);
}

/**
 * What a gPodder `play` action says: a position, the duration when known, and played when the position reached
 * the end (the protocol's only "played"); a play at 0 is "unplayed" (see the README: `new` is ignored by most
 * players and dropped by Nextcloud).
 */
export function fromPlay(position: number, total: number | undefined): FieldChange {
  const change: FieldChange = { position };
  if (total !== undefined) {
    change.total = total;
    change.played = position >= total;
  }
  if (position === 0) change.played = false;
  return change;
}

/**
 * The `play` action that carries the fields' state: played is position = total (a duration the app never gave
 * is taken as the position reached, at least 1 s, so players that ignore a position of 0 still read it).
 */
export function toPlay(fields: EpisodeFields): { position: number; total: number } {
  const position = Math.max(0, Math.round(fields.position?.value ?? 0));
  const known = fields.total ? Math.round(fields.total.value) : undefined;
  if (fields.played?.value === true) {
    const total = Math.max(1, known ?? position);
    return { position: total, total };
  }
  if (fields.played?.value === false && (fields.position === undefined || fields.played.at >= fields.position.at)) {
    return { position: 0, total: Math.max(1, known ?? 1) };
  }
  const total = Math.max(1, known ?? position, position);
  // Not played: a position at the very end would read as played elsewhere.
  return { position: Math.min(position, total - 1), total };
}
