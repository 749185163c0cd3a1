/**
 * The longest a server may make the engine wait (24 h): a `Retry-After` beyond it is read as this much (a year
 * is a misconfiguration, and the app should hear from the server again within a day).
 */
export const MAX_SERVER_DELAY = 24 * 60 * 60 * 1000;

/** Backoff settings. */
export interface Backoff {
  baseDelay: number;
  maxDelay: number;
}

/**
 * Delay before attempt `attempt + 1`: exponential with "equal jitter" (half fixed, half random), so many
 * devices retrying after one outage spread out; a server's Retry-After (capped when read) is a floor.
 */
export function backoffDelay(settings: Backoff, attempt: number, retryAfter?: number, random = Math.random): number {
  const exp = Math.min(settings.maxDelay, settings.baseDelay * 2 ** Math.max(0, attempt));
  const jittered = exp / 2 + (exp / 2) * random();
  return Math.max(Math.round(jittered), retryAfter ?? 0);
}
