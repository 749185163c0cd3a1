// Coalesce reloads: many events in a burst (a pull emits one per page) cause one reload at a time.

/** Returns `request()`: runs `load` soon, never twice at once, once more if asked again meanwhile. */
export function coalesce(load: () => Promise<void>, delay = 50): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running = false;
  let again = false;
  const run = async (): Promise<void> => {
    timer = undefined;
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      await load();
    } catch (error) {
      console.error('demo: reload failed', error);
    } finally {
      running = false;
      if (again) {
        again = false;
        request();
      }
    }
  };
  const request = (): void => {
    if (timer === undefined) timer = setTimeout(() => void run(), delay);
  };
  return request;
}
