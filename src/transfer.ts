import { transferHandlers } from 'comlink';
import { SyncError, isSyncError, type SyncErrorCode } from './errors.ts';

interface ThrownValue {
  value: unknown;
}
interface SerializedThrow {
  isError: boolean;
  value: unknown;
}
interface SerializedSyncError {
  name: 'SyncError';
  message: string;
  stack?: string;
  code: SyncErrorCode;
  status?: number;
  retryAfter?: number;
  /** The cause's name and message (a DOMException or a TypeError need not survive structured cloning). */
  cause?: { name: string; message: string };
}

/** A plain summary of an error's cause, or undefined when it has none. */
function causeOf(cause: unknown): SerializedSyncError['cause'] {
  if (cause === undefined || cause === null) return undefined;
  const c = cause as { name?: unknown; message?: unknown };
  return { name: typeof c.name === 'string' ? c.name : 'Error', message: typeof c.message === 'string' ? c.message : String(cause) };
}

let installed = false;

/**
 * Teach comlink to carry `SyncError`'s `code`, `status`, `retryAfter` and its `cause`'s name and message
 * across the worker boundary (its own handler keeps only name, message and stack). Both sides call it;
 * calling twice is harmless.
 */
export function installErrorTransfer(): void {
  if (installed) return;
  const original = transferHandlers.get('throw');
  if (!original) return;
  installed = true;
  transferHandlers.set('throw', {
    canHandle: (value: unknown): value is ThrownValue => original.canHandle(value),
    serialize(thrown: ThrownValue) {
      const error = thrown.value;
      if (isSyncError(error)) {
        const value: SerializedSyncError = {
          name: 'SyncError',
          message: error.message,
          stack: error.stack,
          code: error.code,
          status: error.status,
          retryAfter: error.retryAfter,
          cause: causeOf(error.cause),
        };
        return [{ isError: true, value } satisfies SerializedThrow, []];
      }
      return original.serialize(thrown);
    },
    deserialize(serialized: unknown) {
      const s = serialized as SerializedThrow;
      const value = s.value as Partial<SerializedSyncError>;
      if (s.isError && isSyncError(value)) {
        // Its status, retryAfter and cause are the init's (a cloned value holds nothing else to read).
        const error = new SyncError(value.code, value.message ?? '', value);
        if (value.stack) error.stack = value.stack;
        throw error;
      }
      return original.deserialize(serialized);
    },
  });
}
