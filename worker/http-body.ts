// Reading a response body with a bound: a server (or whatever answers for it) may send any number of bytes,
// and `response.text()` would hold them all in memory before anything could look at them.
import { SyncError, type SyncErrorInit } from '../src/errors.ts';

/**
 * The most bytes of one response body the engine reads: 16 MiB. The largest legitimate answer is an unpaged
 * gPodder listing (100,000 feed URLs of ~100 bytes is about 10 MB); an Open Podcast API page holds
 * `pageSize` entries (500 by default: well under 1 MB). Beyond this, parsing alone would cost hundreds of MB.
 */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** An answer too large to read (`bad-response`), told apart so a caller may ask for less instead. */
export class TooLarge extends SyncError {
  constructor(message: string, init?: SyncErrorInit) {
    super('bad-response', message, init);
  }
}

/**
 * Whether `error` is a cap's refusal (`TooLarge`), itself or anywhere down its `cause` chain: the HTTP layer wraps
 * what a body's reader throws (with the request's label and status), so the outer error is a plain `SyncError`.
 */
export function isTooLarge(error: unknown): error is SyncError {
  if (!(error instanceof SyncError)) return false;
  // Bounded: a cause chain that loops is not walked forever.
  for (let at: unknown = error, depth = 0; at instanceof Error && depth < 16; at = at.cause, depth++) if (at instanceof TooLarge) return true;
  return false;
}

/** A body read up to a limit: its text, or `over` when it is longer (the rest is never read). */
export interface BoundedBody {
  text: string;
  over: boolean;
}

/** Whether the declared length is over `limit` (then the body is cancelled unread). */
async function declaredOver(response: Response, limit: number): Promise<boolean> {
  const declared = Number(response.headers.get('Content-Length'));
  if (!(Number.isFinite(declared) && declared > limit)) return false;
  await response.body?.cancel().catch(() => undefined);
  return true;
}

/** Read `response`'s body as UTF-8 text, at most `limit` bytes; a longer body is cancelled, not read. `arrived` is called as bytes come. */
export async function readBounded(response: Response, limit: number, arrived?: () => void): Promise<BoundedBody> {
  // As `response.text()` decodes: UTF-8, a leading BOM dropped, bad sequences replaced (validation judges them).
  const parts: string[] = [];
  const { over } = await readStreaming(response, limit, (text) => void parts.push(text), arrived);
  return { text: over ? '' : parts.join(''), over };
}

/** What a body read as it arrives: `blank` when it held nothing but whitespace, `over` when it passed the limit. */
export interface StreamedBody {
  blank: boolean;
  over: boolean;
}

/**
 * Read `response`'s body as UTF-8 text handed to `write` chunk by chunk, at most `limit` bytes: only the chunk
 * being read is held. A longer body is cancelled; so is the rest of one `write` throws on (its error goes on).
 * `arrived` is called as each part of the body comes (a request's timeout measures silence).
 */
export async function readStreaming(response: Response, limit: number, write: (text: string) => void, arrived?: () => void): Promise<StreamedBody> {
  if (await declaredOver(response, limit)) return { blank: true, over: true };
  const decoder = new TextDecoder();
  let blank = true;
  const hand = (text: string) => {
    if (text === '') return;
    if (blank && text.trim() !== '') blank = false;
    write(text);
  };
  if (!response.body) {
    hand(await response.text());
    return { blank, over: false };
  }
  const reader = response.body.getReader();
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      arrived?.();
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => undefined);
        return { blank, over: true };
      }
      hand(decoder.decode(value, { stream: true }));
    }
  } catch (error) {
    await reader.cancel().catch(() => undefined);
    throw error;
  }
  hand(decoder.decode());
  return { blank, over: false };
}
