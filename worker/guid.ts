// The one rule for a subscription guid, whoever supplies it: the app (engine/input.ts) or the server
// (opa/wire.ts), and the last check before a guid goes into a request path (opa/send.ts).

/**
 * Whether `value` can name a subscription: a string with something besides white space that is not a dot
 * segment. `.` and `..` survive `encodeURIComponent` and URL parsing resolves them (so does `%2E`), so
 * `subscriptions/..` would address the base URL itself: such a guid cannot be sent, so it is never kept.
 */
export function isGuid(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '' && value !== '.' && value !== '..';
}
