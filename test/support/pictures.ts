// Comparable pictures of a local view and of the reference server's state (no test-runner imports, so the
// chaos soak can use them under tsx too).
import type { Subscription } from '../../src/types.ts';
import type { RefServer } from '../server/types.ts';

/** A comparable picture of a local view (live subscriptions only). */
export function picture(list: Subscription[]): string[] {
  return list.map((s) => `${s.guid} ${s.feedUrl} ${s.isSubscribed}`).sort();
}

/** The same picture of the server's state. */
export function serverPicture(s: RefServer): string[] {
  return s
    .state()
    .filter((e) => e.deleted === undefined)
    .map((e) => `${e.guid} ${e.feed_url} ${e.is_subscribed}`)
    .sort();
}
