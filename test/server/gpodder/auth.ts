import { randomBytes } from 'node:crypto';
import type { Account, Accounts } from './accounts.ts';

/** Who a request is, or why it is nobody. */
export type Caller = { ok: true; account: Account } | { ok: false; message: string };

/** Basic credentials and `sessionid` cookies. */
export interface Auth {
  /** Check HTTP Basic; with `cookies`, a session from a login also counts. */
  identify(authorization: string | undefined, cookie: string | undefined, cookies: boolean): Caller;
  /** Start a session for `account`; returns the cookie value. */
  login(account: Account): string;
  logout(cookie: string | undefined): void;
  clear(): void;
}

/** The `user:password` of a Basic header, or undefined when there is none. */
export function basicCredentials(header: string | undefined): { user: string; password: string } | undefined {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!m) return undefined;
  const text = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = text.indexOf(':');
  return colon < 0 ? undefined : { user: text.slice(0, colon), password: text.slice(colon + 1) };
}

const sessionOf = (cookie: string | undefined): string | undefined => /(?:^|;\s*)sessionid=([^;]+)/.exec(cookie ?? '')?.[1];

/** Create the checker over `accounts`; the messages are opodsync's, which is the only server that words them. */
export function createAuth(accounts: Accounts): Auth {
  let sessions = new Map<string, string>();
  return {
    identify(authorization, cookie, cookies) {
      const basic = basicCredentials(authorization);
      if (basic) {
        const account = accounts.get(basic.user);
        if (!account) return { ok: false, message: 'Invalid username' };
        return account.password === basic.password ? { ok: true, account } : { ok: false, message: 'Invalid username/password' };
      }
      if (!cookies) return { ok: false, message: 'No username or password provided' };
      const session = sessionOf(cookie);
      if (session === undefined) return { ok: false, message: 'session cookie is required' };
      const account = accounts.get(sessions.get(session) ?? '');
      return account ? { ok: true, account } : { ok: false, message: 'Expired sessionid cookie, and no Authorization header was provided' };
    },
    login(account) {
      const id = randomBytes(16).toString('hex');
      sessions.set(id, account.name);
      return id;
    },
    logout(cookie) {
      const session = sessionOf(cookie);
      if (session !== undefined) sessions.delete(session);
    },
    clear() {
      sessions = new Map();
    },
  };
}
