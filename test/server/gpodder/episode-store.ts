// Where a user's episode actions live: an append-only log (mygpo, opodsync) and the Nextcloud app's
// one row per episode.
import type { EpisodeActionView } from './types.ts';

/** One stored action, whatever server stored it. */
export interface ActionRecord {
  podcast: string;
  episode: string;
  /** As stored (mygpo as sent, the Nextcloud app upper-case, opodsync lower-cased). */
  action: string;
  /** The action's own time, ms (the Nextcloud app and opodsync keep whole seconds). */
  at: number;
  /** When the server stored it, ms. */
  uploaded: number;
  device?: string;
  guid?: string | null;
  started?: number | null;
  position?: number | null;
  total?: number | null;
  /** opodsync: every uploaded field but podcast, episode and action, verbatim and in order (echoed on pulls). */
  data?: Record<string, unknown>;
}

/** An append-only action log. */
export interface ActionLog {
  readonly records: readonly ActionRecord[];
  /** Append `record`; with a `key`, one whose key was stored before is dropped (mygpo). Returns whether it was stored. */
  append(record: ActionRecord, key?: string): boolean;
}

/** Create an empty log. */
export function createActionLog(): ActionLog {
  const records: ActionRecord[] = [];
  const keys = new Set<string>();
  return {
    records,
    append(record, key) {
      if (key !== undefined) {
        if (keys.has(key)) return false;
        keys.add(key);
      }
      records.push(record);
      return true;
    },
  };
}

/** The Nextcloud app's table: one row per episode URL and per guid (both unique per user). */
export interface ActionRows {
  readonly records: readonly ActionRecord[];
  /**
   * The app's save: insert, or when the URL or guid is taken, overwrite the row found by guid, else
   * by URL, whatever the times (a null guid keeps the row's guid). Answers `'conflict'` (and changes
   * nothing) when that overwrite would give the row a URL another row holds: the app then fails
   * ("getId() on null", NC #109/#129).
   */
  save(record: ActionRecord): 'saved' | 'conflict';
}

/** Create an empty table. */
export function createActionRows(): ActionRows {
  const records: ActionRecord[] = [];
  const byUrl = new Map<string, ActionRecord>();
  const byGuid = new Map<string, ActionRecord>();
  const index = (r: ActionRecord): void => {
    byUrl.set(r.episode, r);
    if (r.guid != null) byGuid.set(r.guid, r);
  };
  return {
    records,
    save(record) {
      const guidRow = record.guid != null ? byGuid.get(record.guid) : undefined;
      const urlRow = byUrl.get(record.episode);
      if (!guidRow && !urlRow) {
        records.push(record);
        index(record);
        return 'saved';
      }
      const row = (guidRow ?? urlRow)!;
      if (urlRow && urlRow !== row) return 'conflict';
      const guidHolder = record.guid != null ? byGuid.get(record.guid) : undefined;
      if (guidHolder && guidHolder !== row) return 'conflict';
      byUrl.delete(row.episode);
      if (row.guid != null) byGuid.delete(row.guid);
      const guid = record.guid ?? row.guid;
      Object.assign(row, record, { guid });
      index(row);
      return 'saved';
    },
  };
}

/** A number field of opodsync's verbatim data, if it is one. */
const numberIn = (data: Record<string, unknown>, key: string): number | null | undefined => {
  const v = data[key];
  return typeof v === 'number' ? v : v === null ? null : undefined;
};

/** The test-facing view of a stored action. */
export function actionView(r: ActionRecord): EpisodeActionView {
  const view: EpisodeActionView = {
    podcast: r.podcast,
    episode: r.episode,
    action: r.action,
    timestamp: Math.floor(r.at / 1000),
    uploaded: Math.floor(r.uploaded / 1000),
  };
  const d = r.data;
  const device = d ? d.device : r.device;
  const guid = d ? d.guid : r.guid;
  if (typeof device === 'string') view.device = device;
  if (typeof guid === 'string' || guid === null) view.guid = guid;
  for (const key of ['started', 'position', 'total'] as const) {
    const v = d ? numberIn(d, key) : r[key];
    if (v !== undefined) view[key] = v;
  }
  return view;
}
