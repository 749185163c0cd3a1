// A hang guard that a loaded machine does not trip: a scenario has hung when its trace stops growing for `ms`
// of wall time, not when it has run `ms` in all (at a load of 18 on two cores, whole seeds passed 60 s while
// every step still moved on, and the same seed replayed alone in 3 s).

/** Rejects with `message()` once `progress()` has not changed for `ms`; `stop()` ends the watch. */
export function stallWatchdog(progress: () => number, ms: number, message: () => string): { hung: Promise<never>; stop(): void } {
  let last = progress();
  let since = Date.now();
  let timer: ReturnType<typeof setInterval> | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setInterval(() => {
      const now = progress();
      if (now !== last) {
        last = now;
        since = Date.now();
      } else if (Date.now() - since >= ms) {
        clearInterval(timer);
        reject(new Error(message()));
      }
    }, Math.min(1000, ms));
  });
  return { hung, stop: () => clearInterval(timer) };
}
