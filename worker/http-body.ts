// Reading a response body with a bound: a server (or whatever answers for it) may send any number of bytes,
// and `response.text()` would hold them all in memory before anything could look at them.

/**
 * The most bytes of one response body the engine reads: 16 MiB. The largest legitimate answer is an unpaged
 * gPodder listing (100,000 feed URLs of ~100 bytes is about 10 MB); an Open Podcast API page holds
 * `pageSize` entries (500 by default: well under 1 MB). Beyond this, parsing alone would cost hundreds of MB.
 */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** A body read up to a limit: its text, or `over` when it is longer (the rest is never read). */
export interface BoundedBody {
  text: string;
  over: boolean;
}

/** Read `response`'s body as UTF-8 text, at most `limit` bytes; a longer body is cancelled, not read. */
export async function readBounded(response: Response, limit: number): Promise<BoundedBody> {
  const declared = Number(response.headers.get('Content-Length'));
  if (Number.isFinite(declared) && declared > limit) {
    await response.body?.cancel().catch(() => undefined);
    return { text: '', over: true };
  }
  if (!response.body) return { text: await response.text(), over: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return { text: '', over: true };
    }
    chunks.push(value);
  }
  const whole = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    whole.set(chunk, at);
    at += chunk.byteLength;
  }
  // As `response.text()` decodes: UTF-8, a leading BOM dropped, bad sequences replaced (validation judges them).
  return { text: new TextDecoder().decode(whole), over: false };
}
