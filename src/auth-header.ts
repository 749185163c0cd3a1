// The one header credentials travel in: the worker's requests and the page's last-chance sends build it here.
import type { Auth } from './types.ts';

/** The `[name, value]` header for these credentials, or undefined without any. */
export function authHeader(auth: Auth | undefined): [string, string] | undefined {
  if (!auth) return undefined;
  switch (auth.type) {
    case 'bearer':
      return ['Authorization', `Bearer ${auth.token}`];
    case 'basic':
      // btoa alone throws on non-Latin-1 passwords: the UTF-8 bytes go through it as Latin-1 characters.
      return ['Authorization', `Basic ${btoa(String.fromCharCode(...new TextEncoder().encode(`${auth.username}:${auth.password}`)))}`];
    case 'header':
      return [auth.name, auth.value];
  }
}
