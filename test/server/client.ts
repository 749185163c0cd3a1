// A tiny fetch wrapper for tests that talk to the reference server over real HTTP.

/** One answer: status, headers, raw text, and the JSON body when the text parses. */
export interface ApiResponse<T> {
  status: number;
  headers: Headers;
  text: string;
  body: T;
}

/** Per-call options: a JSON body (or `raw` text), another token (`null` sends none), extra headers. */
export interface CallOptions {
  body?: unknown;
  raw?: string;
  token?: string | null;
  headers?: Record<string, string>;
}

/** A caller bound to a base URL (`.../v1`) and a default bearer token. */
export type ApiCall = <T = unknown>(method: string, path: string, opts?: CallOptions) => Promise<ApiResponse<T>>;

/** Create a caller for `baseUrl`; `path` is appended to it. */
export function createApi(baseUrl: string, token = 'demo-token'): ApiCall {
  return async <T>(method: string, path: string, opts: CallOptions = {}): Promise<ApiResponse<T>> => {
    const headers: Record<string, string> = { ...opts.headers };
    const bearer = opts.token === undefined ? token : opts.token;
    if (bearer !== null) headers.Authorization = `Bearer ${bearer}`;
    let body: string | undefined = opts.raw;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['Content-Type'] = 'application/json';
    }
    return toApiResponse<T>(await fetch(baseUrl + path, { method, headers, body }));
  };
}

/** Read a whole answer: its text, and its JSON when the text parses. */
export async function toApiResponse<T>(res: Response): Promise<ApiResponse<T>> {
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, text, body: parsed as T };
}
