// The reference server's control routes (`/__admin/*`, no token, CORS enabled), found next to the base URL.
import type { ServerEntryView } from '../test/server/types.ts';

/** A reference server's controls. */
export interface Admin {
  origin: string;
  /** Every subscription as the server has it, deleted ones included. */
  state(): Promise<ServerEntryView[]>;
  /** GET `/__admin/<route>`; throws with the server's message on an error status. */
  get(route: string): Promise<unknown>;
  /** POST to `/__admin/<route>`; throws with the server's message on an error status. */
  post(route: string, body?: Record<string, unknown>): Promise<unknown>;
}

async function call(url: string, init?: RequestInit): Promise<unknown> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(5000), cache: 'no-store' });
  const body: unknown = await response.json().catch(() => undefined);
  if (!response.ok) {
    const message = (body as { message?: unknown } | undefined)?.message;
    throw new Error(`${init?.method ?? 'GET'} ${new URL(url).pathname}: ${response.status} ${typeof message === 'string' ? message : ''}`.trim());
  }
  return body;
}

/** The controls of the server behind `baseUrl`, or undefined when it is not a reference server. */
export async function findAdmin(baseUrl: string): Promise<Admin | undefined> {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return undefined;
  }
  // The reference server binds the loopback interface only; never probe a real server's paths.
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) return undefined;
  const origin = url.origin;
  const admin: Admin = {
    origin,
    state: async () => (await call(`${origin}/__admin/state`)) as ServerEntryView[],
    get: (route) => call(`${origin}/__admin/${route}`),
    post: (route, body = {}) =>
      call(`${origin}/__admin/${route}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
  };
  try {
    return Array.isArray(await admin.state()) ? admin : undefined;
  } catch {
    return undefined; // a real server: no controls
  }
}
