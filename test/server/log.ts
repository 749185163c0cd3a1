import type { IncomingHttpHeaders } from 'node:http';
import type { RequestLogEntry } from './types.ts';
import { parseJson } from './http.ts';

const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'api_key', 'x-api-key']);
const LIMIT = 10_000;

/** What the server records about a request when it arrives. */
export interface Arrival {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
  authorized: boolean;
}

/** The request log: newest last, credentials redacted, bounded so long benchmarks stay small. */
export interface RequestLog {
  /** Record an arrival; the returned entry is filled in (status, fault) as the answer goes out. */
  record(arrival: Arrival): RequestLogEntry;
  entries(): RequestLogEntry[];
  clear(): void;
}

/** Create an empty request log. */
export function createRequestLog(): RequestLog {
  let entries: RequestLogEntry[] = [];
  return {
    record(a) {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(a.headers)) {
        if (value === undefined) continue;
        headers[name] = SECRET_HEADERS.has(name) ? '<redacted>' : Array.isArray(value) ? value.join(', ') : value;
      }
      const entry: RequestLogEntry = {
        method: a.method,
        path: a.path,
        query: Object.fromEntries(a.query),
        status: 0,
        headers,
        authPresent: a.headers.authorization !== undefined,
        authorized: a.authorized,
        at: Date.now(),
      };
      if (a.body !== '') entry.body = parseJson(a.body)?.value ?? a.body;
      entries.push(entry);
      if (entries.length > 2 * LIMIT) entries = entries.slice(-LIMIT);
      return entry;
    },
    entries: () => entries.slice(-LIMIT),
    clear() {
      entries = [];
    },
  };
}
