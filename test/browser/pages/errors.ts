// Uncaught errors of the test page and its worker, recorded by the page itself so every engine reports them the
// same way (classic WebDriver has no error events); kept in sessionStorage so a reload does not lose them.
const KEY = 'opa-test-errors';

/** The errors recorded in this tab so far (a live array: later errors are pushed onto it). */
export const errors: string[] = JSON.parse(sessionStorage.getItem(KEY) ?? '[]') as string[];

function record(message: string): void {
  errors.push(message);
  sessionStorage.setItem(KEY, JSON.stringify(errors));
}

const describe = (value: unknown): string => (value instanceof Error ? value.message : String(value));

/** Record uncaught errors and unhandled rejections of the page, and errors the worker reports. */
export function recordErrors(worker?: Worker): void {
  addEventListener('error', (e) => record(`page: ${e.error ? describe(e.error) : e.message}`));
  addEventListener('unhandledrejection', (e) => record(`page: unhandled rejection: ${describe(e.reason)}`));
  worker?.addEventListener('error', (e) => record(`worker: ${e.message}`));
}
