// Turning library values into short text for the page.
import { isSyncError, type ErrorInfo, type PendingChange } from '../src/index.ts';

/** An error as plain data: a `SyncError` keeps its code and HTTP status across the worker boundary. */
export function errorInfo(error: unknown): ErrorInfo {
  if (isSyncError(error)) {
    return error.status === undefined ? { code: error.code, message: error.message } : { code: error.code, message: error.message, status: error.status };
  }
  return { code: 'bad-response', message: error instanceof Error ? error.message : String(error) };
}

/** `server 503: GET /v1/subscriptions: 503 Service Unavailable`. */
export function errorText(info: ErrorInfo): string {
  return `${info.code}${info.status === undefined ? '' : ` ${info.status}`}: ${info.message}`;
}

/** Wall-clock time of day, `14:03:07`. */
export function clock(ms: number): string {
  return new Date(ms).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
}

/** `12 s ago`, `3 min ago`. */
export function ago(ms: number, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  return `${Math.floor(s / 3600)} h ago`;
}

/** What a queued change does, in a few words. */
export function changeText(change: PendingChange): string {
  if (change.kind === 'add') return `subscribe to ${change.feedUrl ?? '?'}`;
  if (change.kind === 'remove') return 'delete';
  const c = change.change ?? {};
  const parts: string[] = [];
  if (c.isSubscribed !== undefined) parts.push(c.isSubscribed ? 'subscribe' : 'unsubscribe');
  if (c.feedUrl !== undefined) parts.push(`feed URL → ${c.feedUrl}`);
  if (c.guid !== undefined) parts.push(`guid → ${c.guid}`);
  return parts.join(', ') || 'update';
}

/** A long guid shortened for tight places (the full one goes in a title). */
export function shortGuid(guid: string): string {
  return guid.length > 14 ? `${guid.slice(0, 8)}…${guid.slice(-4)}` : guid;
}

/** A play position or length: `4:05`, `1:02:09`. */
export function playTime(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const mm = String(Math.floor((s % 3600) / 60));
  const ss = String(s % 60).padStart(2, '0');
  return s >= 3600 ? `${Math.floor(s / 3600)}:${mm.padStart(2, '0')}:${ss}` : `${mm}:${ss}`;
}
