import type { Store } from './store.ts';
import type { ForeignDevice } from './types.ts';
import { parsePatchBody } from './validate.ts';
import { toView } from './wire.ts';
import { MESSAGES } from './http.ts';

/** A refused "other device" operation, with the HTTP status the same request would get. */
export class ForeignError extends Error {
  override readonly name = 'ForeignError';
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/** Another device changing the account: HTTP semantics without HTTP, so a pull sees the changes. */
export function createForeign(store: Store): ForeignDevice {
  const refuse = (status: 404 | 405 | 410): never => {
    throw new ForeignError(status, MESSAGES[status]);
  };
  return {
    add(feedUrl, guid) {
      const result = store.upsert(guid === undefined ? { feed_url: feedUrl } : { feed_url: feedUrl, guid });
      // Over HTTP this is a per-item failure inside a 200; thrown here with the validation status.
      if ('message' in result) throw new ForeignError(405, result.message);
      return toView(store.find(result.guid)!);
    },
    patch(guid, body) {
      const change = parsePatchBody(body);
      if (!change) return refuse(405);
      const result = store.patch(guid, change);
      return result.ok ? result.value : refuse(result.status);
    },
    remove(guid) {
      const e = store.find(guid);
      if (!e) return refuse(404);
      if (e.deleted !== undefined) return refuse(410);
      store.markDeleted(e);
      return toView(e);
    },
  };
}
