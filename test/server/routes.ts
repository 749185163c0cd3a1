import { DELETION_MESSAGES, type Deletions } from './deletions.ts';
import { fail, ok, parseJson, type Reply } from './http.ts';
import type { Listing } from './listing.ts';
import type { Store } from './store.ts';
import type { LinkStyle, WireDeletionAccepted, WirePostResult } from './types.ts';
import { parseDateTime, parsePatchBody, parsePositiveInt, parsePostBody } from './validate.ts';
import { toWire } from './wire.ts';

/** An authorized /v1 request, reduced to what the handlers read. */
export interface ApiRequest {
  method: string;
  /** Path below `/v1`, e.g. `/subscriptions/abc`. */
  path: string;
  query: URLSearchParams;
  body: string;
  /** `http://host:port` as the client addressed us, for absolute links. */
  origin: string;
}

/** Settings the handlers read on every request. */
export interface RouteConfig {
  maxPerPage: number;
  deleteStatus: 201 | 202;
  links: LinkStyle;
}

const DEFAULT_PER_PAGE = 50;

/** A 405 for a method the path does not support. */
function wrongMethod(allowed: string): Reply {
  return { ...fail(405, 'Method not allowed'), headers: { Allow: allowed } };
}

/** Decode one path segment; undefined when it is empty or badly escaped. */
function segment(text: string | undefined): string | undefined {
  if (!text) return undefined;
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** Create the /v1 handler. Validation comes before lookups: a bad body on an unknown guid is a 405. */
export function createRoutes(store: Store, listing: Listing, deletions: Deletions, config: RouteConfig) {
  const list = (req: ApiRequest): Reply => {
    const { query } = req;
    const sinceText = query.get('since');
    const since = sinceText === null ? undefined : parseDateTime(sinceText);
    const page = query.has('page') ? parsePositiveInt(query.get('page')!) : 1;
    const perPage = query.has('per_page') ? parsePositiveInt(query.get('per_page')!) : DEFAULT_PER_PAGE;
    if ((sinceText !== null && since === undefined) || page === undefined || perPage === undefined) return fail(405);
    const linkBase = config.links === 'none' ? undefined : config.links === 'relative' ? '' : req.origin;
    return ok(
      listing.page({
        since: sinceText === null ? undefined : { text: sinceText, ms: since! },
        page,
        perPage: Math.min(perPage, config.maxPerPage),
        linkBase,
        path: '/v1/subscriptions',
      }),
    );
  };

  const add = (req: ApiRequest): Reply => {
    const parsed = parseJson(req.body);
    const feeds = parsed && parsePostBody(parsed.value);
    if (!feeds) return fail(405);
    const out: WirePostResult = { success: [], failure: [] };
    for (const feed of feeds) {
      const result = store.upsert(feed);
      if ('message' in result) out.failure.push(result);
      else out.success.push(result);
    }
    return ok(out);
  };

  const one = (req: ApiRequest, guid: string): Reply => {
    if (req.method === 'GET') {
      const e = store.find(guid);
      if (!e) return fail(404);
      if (e.deleted !== undefined) return fail(410);
      return ok(toWire(e, guid));
    }
    if (req.method === 'PATCH') {
      const parsed = parseJson(req.body);
      const change = parsed && parsePatchBody(parsed.value);
      if (!change) return fail(405);
      const result = store.patch(guid, change);
      return result.ok ? ok(result.value) : fail(result.status);
    }
    if (req.method === 'DELETE') {
      const e = store.find(guid);
      if (!e) return fail(404);
      if (e.deleted !== undefined) return fail(410);
      const body: WireDeletionAccepted = { deletion_id: deletions.request(e), message: DELETION_MESSAGES.PENDING };
      return ok(body, config.deleteStatus);
    }
    return wrongMethod('GET, PATCH, DELETE');
  };

  const deletion = (req: ApiRequest, idText: string): Reply => {
    if (req.method !== 'GET') return wrongMethod('GET');
    if (!/^-?\d{1,15}$/.test(idText)) return fail(405);
    const status = deletions.status(Number(idText));
    return status ? ok(status) : fail(404);
  };

  return (req: ApiRequest): Reply => {
    const path = req.path.length > 1 && req.path.endsWith('/') ? req.path.slice(0, -1) : req.path;
    const parts = path.split('/');
    if (parts.length === 2 && parts[1] === 'subscriptions') {
      if (req.method === 'GET') return list(req);
      if (req.method === 'POST') return add(req);
      return wrongMethod('GET, POST');
    }
    const id = segment(parts[2]);
    if (parts.length === 3 && id !== undefined) {
      if (parts[1] === 'subscriptions') return one(req, id);
      if (parts[1] === 'deletions') return deletion(req, id);
    }
    return fail(404);
  };
}
