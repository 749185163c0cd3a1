import type { Entry } from './entry.ts';
import type { DeletionOutcome, DeletionState, ServerTime, WireDeletionStatus } from './types.ts';

/** The messages the published samples use for each deletion state. */
export const DELETION_MESSAGES: Record<DeletionState, string> = {
  PENDING: 'Deletion is pending',
  SUCCESS: 'Subscription deleted successfully',
  FAILURE: 'The deletion process encountered an error and was rolled back',
};

/** Asynchronous deletion jobs: PENDING for a delay, then SUCCESS (tombstone) or FAILURE (nothing changed). */
export interface Deletions {
  /** Start a job for `entry`, or return the one already pending for it. */
  request(entry: Entry): number;
  status(id: number): WireDeletionStatus | undefined;
  /** Outcome of the next `count` jobs started (all later ones when omitted). */
  setOutcome(outcome: DeletionOutcome, count?: number): void;
  setDelay(ms: number): void;
  /** Drop every job and timer; ids keep counting so an old id never names a new job. */
  reset(delayMs: number): void;
  /** The id the next job gets; `--data` keeps it so that a restart never re-issues an id. */
  nextId: number;
}

interface Job {
  id: number;
  entry: Entry;
  state: DeletionState;
  timer?: unknown;
}

/** Create the job runner; `apply` turns the entry into a tombstone when a job succeeds. */
export function createDeletions(delayMs: number, apply: (entry: Entry) => void, time: Pick<ServerTime, 'setTimeout' | 'clearTimeout'>): Deletions {
  let jobs = new Map<number, Job>();
  let pending = new Map<Entry, Job>();
  let nextId = 1;
  let delay = delayMs;
  let outcome: DeletionOutcome = 'success';
  let outcomeLeft = Infinity;

  const takeOutcome = (): DeletionOutcome => {
    if (outcomeLeft <= 0) return 'success';
    outcomeLeft--;
    return outcome;
  };

  return {
    request(entry) {
      const running = pending.get(entry);
      if (running) return running.id;
      const job: Job = { id: nextId++, entry, state: 'PENDING' };
      // Decided now, so `deletionOutcome` governs the jobs started after it, not the ones finishing after it.
      const result = takeOutcome();
      job.timer = time.setTimeout(() => {
        job.timer = undefined;
        pending.delete(job.entry);
        if (result === 'success') apply(job.entry);
        job.state = result === 'success' ? 'SUCCESS' : 'FAILURE';
      }, delay);
      jobs.set(job.id, job);
      pending.set(entry, job);
      return job.id;
    },
    status(id) {
      const job = jobs.get(id);
      return job && { deletion_id: job.id, status: job.state, message: DELETION_MESSAGES[job.state] };
    },
    setOutcome(next, count = Infinity) {
      outcome = next;
      outcomeLeft = count;
    },
    setDelay(ms) {
      delay = ms;
    },
    get nextId() {
      return nextId;
    },
    set nextId(id) {
      nextId = Math.max(nextId, id);
    },
    reset(ms) {
      for (const job of jobs.values()) if (job.timer !== undefined) time.clearTimeout(job.timer);
      jobs = new Map();
      pending = new Map();
      delay = ms;
      outcome = 'success';
      outcomeLeft = Infinity;
    },
  };
}
