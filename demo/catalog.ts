// Where the demo gets a feed's episodes. A real player reads them from the feed's RSS itself (title,
// enclosure URL, guid, duration); the demo cannot fetch arbitrary feeds from the page (CORS), so it asks the
// local gPodder reference server, which makes up a few per feed URL (`GET /__admin/feed/…`).
import type { CatalogEpisode } from '../test/server/gpodder/types.ts';
import type { Admin } from './admin.ts';

/** One episode as a feed lists it. */
export type FeedEpisode = CatalogEpisode;

/** The episodes of `feedUrl` the reference server behind `admin` makes up, newest first; [] when it has none (an OPA server). */
export async function feedEpisodes(admin: Admin | undefined, feedUrl: string): Promise<FeedEpisode[]> {
  if (!admin) return [];
  try {
    const body = (await admin.get(`feed/${encodeURIComponent(feedUrl)}`)) as { episodes?: unknown };
    return Array.isArray(body.episodes) ? (body.episodes as FeedEpisode[]) : [];
  } catch {
    return []; // the Open Podcast API reference server has no such route
  }
}
