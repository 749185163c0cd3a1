/** A server clock whose readings are strictly increasing: next = max(Date.now(), last + 1). */
export interface Clock {
  /** Take a new timestamp for a write (ms since epoch). */
  tick(): number;
  /** Take `n` consecutive timestamps ending no later than now when the clock allows; returns the first. */
  reserve(n: number): number;
}

/** Create a strictly increasing clock. */
export function createClock(now: () => number = Date.now): Clock {
  let last = -Infinity;
  return {
    tick() {
      last = Math.max(now(), last + 1);
      return last;
    },
    reserve(n) {
      // Bulk data is back-dated so that seeding 100k entries does not push the clock minutes ahead.
      const first = Math.max(now() - n + 1, last + 1);
      last = first + Math.max(n, 1) - 1;
      return first;
    },
  };
}

/** ISO 8601 UTC with milliseconds, as every timestamp on the wire. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
