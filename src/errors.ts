/** Every code a `SyncError` can carry. */
export type SyncErrorCode =
  | 'network'
  | 'timeout'
  | 'rate-limited'
  | 'server'
  | 'unauthorized'
  | 'not-found'
  | 'invalid'
  | 'gone'
  | 'bad-response'
  | 'offline'
  | 'quota'
  | 'storage'
  | 'account-mismatch'
  | 'unsupported'
  | 'interrupted'
  | 'closed';

/** Extra data an error may carry. */
export interface SyncErrorInit {
  /** The HTTP status of the answer, when there was one. */
  status?: number;
  /** Milliseconds the server asked us to wait (Retry-After). */
  retryAfter?: number;
  /** The underlying error (the error's `cause`). */
  cause?: unknown;
}

/** The one error type of opa-sync: `code` says what went wrong, `status` the HTTP status when there was one. */
export class SyncError extends Error {
  /** Always `'SyncError'`: what `isSyncError` checks, across the worker boundary too. */
  override readonly name = 'SyncError';
  /** What went wrong: see the guide docs/errors.md for each code and what to do about it. */
  readonly code: SyncErrorCode;
  /** The HTTP status, when an answer gave one. */
  readonly status?: number;
  /** Milliseconds the server asked to wait (`Retry-After`), when it did. */
  readonly retryAfter?: number;

  /** A typed error: `code`, a message that says what happened and what to do, and the HTTP details in `init`. */
  constructor(code: SyncErrorCode, message: string, init: SyncErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    // Both are own fields either way (class fields): absent ones stay undefined.
    this.code = code;
    this.status = init.status;
    this.retryAfter = init.retryAfter;
  }
}

/** True for a `SyncError`, also one rebuilt on the other side of the worker boundary or from another realm. */
export function isSyncError(value: unknown): value is SyncError {
  // An instance carries both too (`name` is its own field); a primitive has neither.
  const v = value as { name?: unknown; code?: unknown } | null | undefined;
  return v?.name === 'SyncError' && typeof v.code === 'string';
}
