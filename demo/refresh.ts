// Coalesce reloads: many events in a burst (a pull emits one per page) cause one reload at a time,
// spaced so that the page's reads do not crowd out the worker's pull (they share its thread).

/** Returns `request()`: runs `load` soon, never twice at once, and leaves a gap of 3x its last run time. */
export function coalesce(load: () => Promise<void>, delay = 30, minGap = 250): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running = false;
  let again = false;
  let lastEnd = 0;
  let gap = 0;
  const run = async (): Promise<void> => {
    timer = undefined;
    if (running) {
      again = true;
      return;
    }
    running = true;
    const start = performance.now();
    try {
      await load();
    } catch (error) {
      console.error('demo: reload failed', error);
    } finally {
      running = false;
      lastEnd = performance.now();
      gap = Math.max(minGap, 3 * (lastEnd - start));
      if (again) {
        again = false;
        request();
      }
    }
  };
  const request = (): void => {
    if (timer !== undefined) return;
    const wait = Math.max(delay, lastEnd + gap - performance.now());
    timer = setTimeout(() => void run(), wait);
  };
  return request;
}
