import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { WireError } from './types.ts';

/** What a handler answers, before it is written (so a fault can still replace it). */
export interface Reply {
  status: number;
  /** JSON body. */
  body?: unknown;
  /** Error message: the body becomes `{code, message}`. */
  error?: string;
  headers?: Record<string, string>;
  /** Exact body text, sent as it is (wins over `body` and `error`). */
  text?: string;
  /** Content-Type of `text`. */
  contentType?: string;
}

/** The error messages of the published samples. */
export const MESSAGES = {
  401: 'User not authorized',
  404: 'Resource not found',
  405: 'Input could not be validated',
  410: 'Subscription has been deleted',
} as const;

/** An error reply with the sample message for `status` (or `message`). */
export function fail(status: keyof typeof MESSAGES, message: string = MESSAGES[status]): Reply {
  return { status, error: message };
}

/** A 200 JSON reply. */
export function ok(body: unknown, status = 200): Reply {
  return { status, body };
}

/** A message for any status, for fault bodies. */
export function statusText(status: number): string {
  return (MESSAGES as Record<number, string>)[status] ?? STATUS_CODES[status] ?? 'Error';
}

/** CORS headers for every answer; the allowed request headers echo what the preflight asked for. */
export function corsHeaders(req: IncomingMessage): Record<string, string> {
  const asked = req.headers['access-control-request-headers'];
  return {
    'Access-Control-Allow-Origin': '*',
    'Access-Control-Allow-Methods': 'GET,POST,PATCH,DELETE,OPTIONS',
    'Access-Control-Allow-Headers': asked ? String(asked) : 'Authorization, Content-Type',
    'Access-Control-Expose-Headers': 'Retry-After',
  };
}

/** Serialise a reply: JSON body, or `{code, message}` with `code` a number or a string. */
export function replyText(reply: Reply, codeAsString: boolean): string | undefined {
  if (reply.text !== undefined) return reply.text;
  if (reply.error !== undefined) {
    const body: WireError = { code: codeAsString ? String(reply.status) : reply.status, message: reply.error };
    return JSON.stringify(body);
  }
  return reply.body === undefined ? undefined : JSON.stringify(reply.body);
}

/** Write a whole answer with CORS (unless `cors` is false), no-store caching and a Content-Length. */
export function send(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  text: string | undefined,
  headers: Record<string, string> = {},
  contentType = 'application/json; charset=utf-8',
  cors = true,
): void {
  const all: Record<string, string | number> = { ...(cors ? corsHeaders(req) : {}), 'Cache-Control': 'no-store', ...headers };
  if (text !== undefined) {
    all['Content-Type'] = contentType;
    all['Content-Length'] = Buffer.byteLength(text);
  }
  res.writeHead(status, all);
  res.end(text);
}

/** Read a request body as UTF-8 text, refusing more than `limit` bytes. */
export function readBody(req: IncomingMessage, limit: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > limit ? undefined : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Parse JSON text; undefined for empty or broken text. */
export function parseJson(text: string): { value: unknown } | undefined {
  if (text.trim() === '') return undefined;
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}
