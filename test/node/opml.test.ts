// OPML in and out (issue 33): files shaped as players export them, bad input refused, and any feed set written
// and read back as it was. Node has no DOMParser: xmldom stands in (it throws where browsers return a
// `parsererror` document; `readOpml` takes both). The browsers' own parsers run the same fixtures in
// test/browser/opml.test.ts.
import { readFileSync } from 'node:fs';
import { DOMParser as XmlDomParser } from '@xmldom/xmldom';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SyncError } from '../../src/errors.ts';
import { feedUrlOf } from '../../src/feed-url.ts';
import { MAX_OPML_LENGTH, MAX_OPML_OUTLINES, readOpml, writeOpml } from '../../src/opml.ts';

const fixture = (name: string) => readFileSync(new URL(`../support/fixtures/opml/${name}`, import.meta.url), 'utf8');
const g = globalThis as { DOMParser?: unknown };
/** xmldom, quiet, and strict as browsers are: an error is a failure to parse, not something to print. */
class StrictParser extends XmlDomParser {
  constructor() {
    super({
      onError: (level, message) => {
        if (level !== 'warning') throw new Error(message);
      },
    });
  }
}
let before: unknown;
beforeAll(() => {
  before = g.DOMParser;
  g.DOMParser = StrictParser;
});
afterAll(() => void (g.DOMParser = before));

function refused(text: unknown): SyncError {
  try {
    readOpml(text as string);
  } catch (error) {
    expect(error).toBeInstanceOf(SyncError);
    return error as SyncError;
  }
  throw new Error('readOpml took it');
}

describe('readOpml: the shapes players export', () => {
  it('AntennaPod: OPML 2.0, entities in titles and URLs (numeric ones too)', () => {
    expect(readOpml(fixture('antennapod.opml'))).toEqual({
      feeds: ['https://feeds.example.org/radiolab', 'https://podcasts.example.net/feed?id=42&format=rss', 'http://legumes.example.fr/rss.xml'],
      skipped: [],
    });
  });

  it('Pocket Casts: OPML 1.0 with every feed inside one folder outline', () => {
    expect(readOpml(fixture('pocketcasts.opml')).feeds).toEqual([
      'https://feeds.example.org/radiolab',
      'https://feeds.example.com/the-daily/rss',
      'https://feeds.example.com/hard-fork',
    ]);
  });

  it('Apple Podcasts: a UTF-8 BOM, CRLF line ends, categories two deep', () => {
    const text = fixture('apple-bom-crlf.opml');
    expect(text.charCodeAt(0)).toBe(0xfeff);
    expect(text).toContain('\r\n');
    expect(readOpml(text)).toEqual({ feeds: ['https://feeds.example.com/conan', 'https://feeds.example.org/upfirst'], skipped: [] });
  });

  it('gPodder: xmlUrl in any case, with or without type, padded URLs trimmed, markup in text attributes', () => {
    expect(readOpml(fixture('gpodder.opml'))).toEqual({
      feeds: [
        'https://feeds.example.net/lan',
        'https://feeds.example.net/padded.xml',
        'https://feeds.example.net/lower',
        'https://feeds.example.net/upper',
        'https://feeds.example.net/notype',
      ],
      skipped: [],
    });
  });

  it('Kasts: duplicates, javascript:, file: and relative URLs and a link entry are skipped with a reason', () => {
    expect(readOpml(fixture('kasts.opml'))).toEqual({
      feeds: ['https://feeds.example.org/astronomycast'],
      skipped: [
        { url: 'https://feeds.example.org/astronomycast', reason: 'duplicate' },
        { url: 'javascript:alert(1)', reason: 'not-a-feed-url' },
        { url: 'file:///home/me/feed.xml', reason: 'not-a-feed-url' },
        { url: '/feeds/relative.xml', reason: 'not-a-feed-url' },
        { reason: 'no-feed-url' },
        { reason: 'no-feed-url' },
      ],
    });
  });
});

describe('readOpml: bad input is refused with `invalid`, and says what to do', () => {
  it('not XML', () => {
    const error = refused('Radiolab https://feeds.example.org/radiolab');
    expect(error.code).toBe('invalid');
    expect(error.message).toMatch(/not well-formed XML.*export/);
  });

  it('XML that is not OPML (an RSS feed chosen by mistake)', () => {
    const error = refused('<?xml version="1.0"?><rss version="2.0"><channel><title>x</title></channel></rss>');
    expect(error.code).toBe('invalid');
    expect(error.message).toMatch(/not OPML \(its root is <rss>/);
    expect(refused('<opml version="2.0"><head/></opml>').message).toMatch(/no <body>/);
  });

  it('truncated XML', () => {
    expect(refused(fixture('antennapod.opml').slice(0, 400)).code).toBe('invalid');
  });

  it('not a string', () => {
    expect(refused(new Uint8Array(3)).message).toMatch(/file\.text\(\)/);
  });

  it(`over ${MAX_OPML_LENGTH} characters, before parsing anything`, () => {
    const error = refused(`<opml><body>${' '.repeat(MAX_OPML_LENGTH)}</body></opml>`);
    expect(error.message).toMatch(/over the 8388608 read/);
  });

  it(`more than ${MAX_OPML_OUTLINES} outlines`, () => {
    const many = Array.from({ length: MAX_OPML_OUTLINES + 1 }, (_, i) => `<outline xmlUrl="https://f.example/${i}"/>`).join('');
    expect(readOpml(`<opml><body>${many.slice(0, many.lastIndexOf('<outline'))}</body></opml>`).feeds).toHaveLength(MAX_OPML_OUTLINES);
    expect(refused(`<opml><body>${many}</body></opml>`).message).toMatch(/10001 outlines.*split it/);
  });

  it('without a DOMParser (a worker) it says where to call it', () => {
    g.DOMParser = undefined;
    try {
      expect(refused('<opml/>').code).toBe('unsupported');
    } finally {
      g.DOMParser = StrictParser;
    }
  });
});

// Any text, markup characters, whitespace XML folds and characters XML cannot hold made frequent.
const hostileText = fc.string({ unit: fc.oneof(fc.constantFrom('&', '<', '>', '"', "'", '\t', '\n', '\r', '\u0000', '\u001f', '\ud800', '\ufffe', ']]>'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })) });
// Feed URLs as the store holds them (they passed the feed-URL rule), some with markup characters in the query.
const feedUrl = fc.oneof(
  fc.webUrl({ withQueryParameters: true, withFragments: true, validSchemes: ['http', 'https'] }),
  fc.tuple(fc.webUrl(), hostileText).map(([url, q]) => `${url}?q=${q}`).filter((url) => feedUrlOf(url) === url),
);
/** Characters XML 1.0 cannot hold, raw or as a reference. */
const NOT_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|\p{Cs}/u;
const feeds = fc.uniqueArray(fc.record({ feedUrl, title: fc.option(hostileText, { nil: undefined }) }), { selector: (f) => f.feedUrl, maxLength: 30 });

describe('writeOpml', () => {
  it('is well-formed for any URLs and titles, and reads back to the same feeds in order', () => {
    fc.assert(
      fc.property(feeds, hostileText, (list, title) => {
        const text = writeOpml(list, { title, date: new Date(0) });
        expect(text).not.toMatch(NOT_XML);
        // A URL with a character XML cannot hold comes back percent-encoded (the same address); every other as it was.
        const back = readOpml(text);
        expect(back.skipped).toEqual([]);
        back.feeds.forEach((url, i) => {
          const sent = list[i]!.feedUrl;
          if (NOT_XML.test(sent)) expect(new URL(url).href).toBe(new URL(sent).href);
          else expect(url).toBe(sent);
        });
        expect(back.feeds).toHaveLength(list.length);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps characters an attribute value would fold (tabs, line breaks) and every markup character', () => {
    const url = "https://f.example/a?x=1&y=<2>&q=\"'\tz\r\nw";
    expect(readOpml(writeOpml([{ feedUrl: url, title: '<b>&"\'</b>\n' }])).feeds).toEqual([url]);
  });

  it("writes OPML 2.0 with the app's titles", () => {
    const text = writeOpml([{ feedUrl: 'https://f.example/rss', title: 'Ça & Co' }], { title: 'My player', date: new Date(Date.UTC(2026, 10, 27)) });
    expect(text).toContain('<opml version="2.0">');
    expect(text).toContain('<title>My player</title>');
    expect(text).toContain('<dateCreated>Fri, 27 Nov 2026 00:00:00 GMT</dateCreated>');
    expect(text).toContain('<outline type="rss" text="Ça &amp; Co" title="Ça &amp; Co" xmlUrl="https://f.example/rss"/>');
  });
});
