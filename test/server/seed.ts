import type { Random } from './random.ts';

/** One generated subscription before it is stored. */
export interface SeedFeed {
  feedUrl: string;
  guid: string;
  isSubscribed: boolean;
}

const ADJECTIVES = [
  'daily', 'weekly', 'curious', 'quiet', 'loud', 'hidden', 'open', 'deep', 'tiny', 'grand', 'late-night',
  'morning', 'northern', 'urban', 'rural', 'modern', 'vintage', 'radical', 'gentle', 'bold', 'lucky', 'wild',
];
const NOUNS = [
  'history', 'science', 'kitchen', 'garden', 'code', 'cinema', 'football', 'jazz', 'economics', 'space',
  'design', 'poetry', 'chess', 'travel', 'health', 'startup', 'crime', 'comedy', 'language', 'philosophy',
  'parenting', 'music', 'nature', 'politics', 'games', 'books', 'architecture', 'climate', 'sailing',
];
const SUFFIXES = ['show', 'hour', 'talk', 'cast', 'radio', 'diaries', 'club', 'report', 'weekly', 'podcast'];
const HOSTS = ['anchorhost', 'castbox', 'feedpress', 'podbean', 'simplecast', 'libsyn', 'transistor'];

/** A feed address in one of the shapes real podcast hosts use. */
function feedAddress(random: Random, name: string): string {
  switch (random.int(6)) {
    case 0:
      return `https://${name}.example/feed/`;
    case 1:
      return `https://media.${name}.example/rss.xml`;
    case 2:
      return `https://${random.pick(HOSTS)}.example/shows/${name}/rss`;
    case 3:
      return `http://www.${name}.example/feed.rss?format=mp3`;
    default:
      return `https://feeds.${name}.example/podcast.xml`;
  }
}

/** Make `n` realistic, distinct feeds; `taken` says which addresses already exist. */
export function seedFeeds(random: Random, n: number, taken: (url: string) => boolean): SeedFeed[] {
  const out: SeedFeed[] = [];
  const made = new Set<string>();
  const uses = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const base = `${random.pick(ADJECTIVES)}-${random.pick(NOUNS)}-${random.pick(SUFFIXES)}`;
    // Past a few thousand feeds names repeat: number them the way hosts disambiguate slugs.
    let k = uses.get(base) ?? 1;
    let feedUrl = feedAddress(random, k === 1 ? base : `${base}-${k}`);
    while (made.has(feedUrl) || taken(feedUrl)) feedUrl = feedAddress(random, `${base}-${++k}`);
    uses.set(base, k + 1);
    made.add(feedUrl);
    out.push({ feedUrl, guid: random.uuid(), isSubscribed: random.next() >= 0.1 });
  }
  return out;
}
