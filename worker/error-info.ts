import { isSyncError } from '../src/errors.ts';
import type { ErrorInfo } from '../src/types.ts';

/** An error as plain data (for status, the queue and messages between tabs). */
export function errorInfo(error: unknown): ErrorInfo {
  if (isSyncError(error)) {
    return error.status === undefined ? { code: error.code, message: error.message } : { code: error.code, message: error.message, status: error.status };
  }
  return { code: 'bad-response', message: error instanceof Error ? error.message : String(error) };
}
