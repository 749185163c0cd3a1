// The one header credentials travel in: the worker's requests and the page's last-chance sends build it here.
import type { Auth } from './types.ts';

function base64(text: string): string {
  // btoa alone throws on non-Latin-1 passwords.
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** The `[name, value]` header for these credentials, or undefined without any. */
export function authHeader(auth: Auth | undefined): [string, string] | undefined {
  if (!auth) return undefined;
  switch (auth.type) {
    case 'bearer':
      return ['Authorization', `Bearer ${auth.token}`];
    case 'basic':
      return ['Authorization', `Basic ${base64(`${auth.username}:${auth.password}`)}`];
    case 'header':
      return [auth.name, auth.value];
  }
}
