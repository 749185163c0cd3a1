// mygpo's URL sanitising, pinned with the examples its own documentation gives.
import { describe, expect, it } from 'vitest';
import { sanitizeFeedUrl } from '../server/gpodder/sanitize.ts';

describe('sanitizeFeedUrl', () => {
  it.each([
    ['itpc://example.org/podcast.rss', 'http://example.org/podcast.rss'],
    ['feed://example.org/podcast.rss', 'http://example.org/podcast.rss'],
    ['curry.com', 'http://curry.com/'],
    ['http://Example.COM/', 'http://example.com/'],
    ['http://example.org/test?', 'http://example.org/test'],
    [' http://example.com/podcast.rss ', 'http://example.com/podcast.rss'],
    ['http://a@b:c@host.com/', 'http://host.com/'],
    ['ftp://a:b:c@host.com/', 'ftp://host.com/'],
    ['http://w%20x:y%20z@example.org/', 'http://example.org/'],
    ['http://example.com/x@y:z@test.com/', 'http://example.com/x%40y%3Az%40test.com/'],
    ['http://en.wikipedia.org/wiki/Ä', 'http://en.wikipedia.org/wiki/%C3%84'],
    ['http://en.wikipedia.org/w/index.php?title=Ä&action=edit', 'http://en.wikipedia.org/w/index.php?title=%C3%84&action=edit'],
    ['https://host.example/a b?q=a b+c', 'https://host.example/a%20b?q=a+b%2Bc'],
    ['HTTPS://Host.Example/Path?X=1#Frag', 'https://host.example/Path?X=1#Frag'],
    ['https://host.example', 'https://host.example/'],
  ])('%s → %s', (raw, clean) => {
    expect(sanitizeFeedUrl(raw)).toBe(clean);
  });

  it.each(['', '   ', 'short', 'gopher://host.example/feed', 'mailto://someone@host.example'])('refuses %j with ""', (raw) => {
    expect(sanitizeFeedUrl(raw)).toBe('');
  });

  it('leaves an already clean URL alone', () => {
    const url = 'https://feeds.example.com/show/podcast.xml?format=mp3';
    expect(sanitizeFeedUrl(url)).toBe(url);
  });
});
