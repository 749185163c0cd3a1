// The engine's alone: the page entry holds the code both entries share (src/errors.ts), and a page never
// retries a request.
import type { SyncError } from '../src/errors.ts';

/** Whether retrying the same request later may succeed. */
export function isTransient(error: SyncError): boolean {
  return (
    error.code === 'network' ||
    error.code === 'timeout' ||
    error.code === 'rate-limited' ||
    error.code === 'server' ||
    error.code === 'offline'
  );
}
