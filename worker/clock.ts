// The engine's time and chance. Everything that schedules work reads this, never `Date.now` or
// `setTimeout` directly, so a simulation can drive the engine through exactly the same interleaving twice.
import type { Clock } from '../src/types.ts';

/** The wall clock, the platform's timers and crypto-grade randomness. */
export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  random: () => crypto.getRandomValues(new Uint32Array(1))[0]! / 2 ** 32,
};

/** The longest delay a platform timer keeps (2^31−1 ms, about 24.8 days): beyond it, `setTimeout` fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A timer delay the platform keeps: a number in [0, MAX_TIMER_MS] (NaN is 0; a longer wait wakes early and looks again). */
export function clampDelay(ms: number): number {
  if (Number.isNaN(ms) || ms <= 0) return 0;
  return Math.min(ms, MAX_TIMER_MS);
}

/** `clock` with every timer's delay clamped (the one place the engine's timers go through: see `resolveOptions`). */
export function clampedTimers(clock: Clock): Clock {
  const clamped: Clock = {
    now: () => clock.now(),
    setTimeout: (callback, ms) => clock.setTimeout(callback, clampDelay(ms)),
    clearTimeout: (handle) => clock.clearTimeout(handle),
    random: () => clock.random(),
  };
  if (clock.monotonic) clamped.monotonic = () => clock.monotonic!();
  return clamped;
}

/**
 * Device time that does not step while this engine runs: the wall clock when it was made plus the monotonic
 * time elapsed since (the wall clock itself without a monotonic one). Holds on queued changes are set and
 * read in it, so a clock stepped while a hold runs neither stretches nor cuts it short.
 */
export function steadyNow(clock: Clock): () => number {
  if (!clock.monotonic) return () => clock.now();
  const wall = clock.now();
  const start = clock.monotonic();
  return () => wall + (clock.monotonic!() - start);
}

/** Monotonic milliseconds on `clock` (its wall clock when it has no monotonic one). */
export function monotonicNow(clock: Clock): number {
  return clock.monotonic ? clock.monotonic() : clock.now();
}

/**
 * An AbortSignal that aborts with a `TimeoutError` after `ms` of silence on `clock` (`touch()` when something
 * arrives starts the silence again) or after `total` ms in all; call `clear()` once done.
 */
export function timeoutSignal(clock: Clock, ms: number, total = ms): { signal: AbortSignal; touch(): void; clear(): void } {
  const controller = new AbortController();
  const after = (wait: number, message: string) => clock.setTimeout(() => controller.abort(new DOMException(message, 'TimeoutError')), wait);
  const silence = () => after(ms, `no answer within ${ms} ms`);
  let idle = silence();
  const cap = after(total, `the answer took over ${total} ms`);
  return {
    signal: controller.signal,
    touch() {
      clock.clearTimeout(idle);
      idle = silence();
    },
    clear() {
      clock.clearTimeout(idle);
      clock.clearTimeout(cap);
    },
  };
}

/** A UUID in the version-4 layout drawn from `random` (seedable, unlike `crypto.randomUUID`). */
export function randomUuid(random: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16));
  hex[12] = '4';
  hex[16] = (8 + Math.floor(random() * 4)).toString(16);
  return hex.join('').replace(/(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-');
}
