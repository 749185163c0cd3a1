import { transferHandlers } from 'comlink';
import { SyncError, isSyncError, type SyncErrorCode } from './errors.ts';

interface ThrownValue {
  value: unknown;
}
/** What comlink posts for a thrown value. */
export interface SerializedThrow {
  isError: boolean;
  value: unknown;
}
/** A `SyncError` as it crosses the worker boundary. */
export interface SerializedSyncError {
  name: 'SyncError';
  message: string;
  stack?: string | undefined;
  code: SyncErrorCode;
  status?: number | undefined;
  retryAfter?: number | undefined;
  /** The cause's name and message (a DOMException or a TypeError need not survive structured cloning). */
  cause?: { name: string; message: string } | undefined;
}

/**
 * How a thrown `SyncError` goes on the wire (undefined for any other value): given by the worker's side
 * (worker/expose.ts), so the page, which only reads them, carries none of the writing.
 */
export type SyncErrorWriter = (thrown: unknown) => SerializedThrow | undefined;

let installed = false;
let writer: SyncErrorWriter | undefined;

/**
 * Teach comlink to carry `SyncError`'s `code`, `status`, `retryAfter` and its `cause`'s name and message
 * across the worker boundary (its own handler keeps only name, message and stack): the side that throws them
 * passes `write`. Both sides call it; calling again only adds a writer.
 */
export function installErrorTransfer(write?: SyncErrorWriter): void {
  writer ??= write;
  const original = transferHandlers.get('throw');
  if (installed || !original) return;
  installed = true;
  transferHandlers.set('throw', {
    canHandle: original.canHandle as (value: unknown) => value is ThrownValue,
    serialize(thrown: ThrownValue) {
      const written = writer?.(thrown.value);
      return written ? [written, []] : original.serialize(thrown);
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
