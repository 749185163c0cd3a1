// Polling, for tests and the bench alike (no test-runner imports here).

/** Poll `check` until it returns a truthy value; throws with `what` and the last value when time runs out. */
export async function waitFor<T>(what: string, check: () => T | Promise<T>, timeout = 15_000, interval = 50): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeout;
  let last: T | undefined;
  let lastError: unknown;
  for (;;) {
    try {
      last = await check();
      if (last) return last as NonNullable<T>;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const detail = lastError ? ` (last error: ${String(lastError)})` : ` (last value: ${JSON.stringify(last)})`;
      throw new Error(`timed out after ${timeout} ms waiting for ${what}${detail}`);
    }
    await sleep(interval);
  }
}

/** Resolve after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
