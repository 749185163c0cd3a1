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
}

let installed = false;

/**
 * Teach comlink to carry `SyncError`'s `code`, `status` and `retryAfter` across the worker boundary
 * (its own handler keeps only name, message and stack). Both sides call it; calling twice is harmless.
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
        };
        return [{ isError: true, value } satisfies SerializedThrow, []];
      }
      return original.serialize(thrown);
    },
    deserialize(serialized: unknown) {
      const s = serialized as SerializedThrow;
      const value = s.value as Partial<SerializedSyncError> | undefined;
      if (s.isError && value?.name === 'SyncError' && typeof value.code === 'string') {
        const error = new SyncError(value.code, value.message ?? '', {
          status: value.status,
          retryAfter: value.retryAfter,
        });
        if (value.stack) error.stack = value.stack;
        throw error;
      }
      return original.deserialize(serialized);
    },
  });
}
