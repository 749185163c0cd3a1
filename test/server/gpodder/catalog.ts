// A few made-up episodes per feed URL, for the demo's episodes panel and for tests that need real-looking
// episode URLs and guids. A reference-server extra: real gPodder servers do not serve feeds (a player
// reads the RSS itself), so this is reached through `/__admin/feed/…`, never through `/api/2`.
import { createRandom } from '../random.ts';
import type { CatalogEpisode } from './types.ts';

const TOPICS = [
  'the long road back', 'questions from listeners', 'a quiet revolution', 'what we got wrong', 'live from the archive',
  'an interview', 'the year in review', 'small experiments', 'behind the scenes', 'the big debate', 'first principles',
  'a field recording', 'mailbag', 'the unfinished story', 'tools of the trade',
];
const WEEK_MS = 7 * 24 * 3600 * 1000;
const FIRST_EPISODE_MS = Date.UTC(2024, 0, 1, 6);

/** FNV-1a over the URL's UTF-16 units: the same feed gets the same episodes in every run. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** The host episodes of `feedUrl` are served from (feeds that are not URLs get a stand-in). */
function mediaHost(feedUrl: string): string {
  try {
    const { protocol, host } = new URL(feedUrl);
    if ((protocol === 'http:' || protocol === 'https:') && host) return host;
  } catch {
    // Not a URL: fall through.
  }
  return 'feed.example';
}

/**
 * 3 to 6 episodes of `feedUrl`, newest first, each with a title, an enclosure URL on the feed's host,
 * a guid and a duration. The second newest carries a tracking query string, as many hosts add.
 */
export function feedEpisodes(feedUrl: string): CatalogEpisode[] {
  const random = createRandom(hash(feedUrl));
  const count = 3 + random.int(4);
  const host = mediaHost(feedUrl);
  const slug = host.replace(/^(www|feeds|media)\./, '').split('.')[0] || 'show';
  const out: CatalogEpisode[] = [];
  for (let n = count; n >= 1; n--) {
    const query = n === count - 1 ? '?source=rss' : '';
    out.push({
      title: `${n}. ${random.pick(TOPICS)}`,
      url: `https://${host}/media/${slug}-${String(n).padStart(3, '0')}.mp3${query}`,
      guid: random.uuid(),
      duration: 600 + 60 * random.int(80),
      published: new Date(FIRST_EPISODE_MS + (n - 1) * WEEK_MS).toISOString(),
    });
  }
  return out;
}

/** The guid of `episodeUrl` among `feedUrl`'s made-up episodes, or null (mygpo's "guid it parsed from the feed"). */
export function catalogGuid(feedUrl: string, episodeUrl: string): string | null {
  return feedEpisodes(feedUrl).find((e) => e.url === episodeUrl)?.guid ?? null;
}
