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

/** Monotonic milliseconds on `clock` (its wall clock when it has no monotonic one). */
export function monotonicNow(clock: Clock): number {
  return clock.monotonic ? clock.monotonic() : clock.now();
}

/** An AbortSignal that aborts with a `TimeoutError` after `ms` on `clock`; call `clear()` once done. */
export function timeoutSignal(clock: Clock, ms: number): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const handle = clock.setTimeout(() => controller.abort(new DOMException(`no answer within ${ms} ms`, 'TimeoutError')), ms);
  return { signal: controller.signal, clear: () => clock.clearTimeout(handle) };
}

/** A UUID in the version-4 layout drawn from `random` (seedable, unlike `crypto.randomUUID`). */
export function randomUuid(random: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16));
  hex[12] = '4';
  hex[16] = (8 + Math.floor(random() * 4)).toString(16);
  const h = hex.join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
