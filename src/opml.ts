// OPML, the file every podcast player imports and exports: read with the page's own XML parser (loaded only when
// an app imports or exports, so pages without it carry none of it), written as OPML 2.0.
import { SyncError } from './errors.ts';
import { feedUrlOf } from './feed-url.ts';
import type { OpmlFeed, OpmlSkip } from './types.ts';

/** The longest OPML text read, in UTF-16 code units: a 10,000-feed export is about 3 MB. */
export const MAX_OPML_LENGTH = 8 * 1024 * 1024;
/** The most outlines read: more is not a listener's library. */
export const MAX_OPML_OUTLINES = 10_000;

/** The feeds an OPML document names (each once, in document order) and the outlines passed over, with why. */
export interface OpmlFeeds {
  feeds: string[];
  skipped: OpmlSkip[];
}

/** Read the feed URLs of an OPML 1.0 or 2.0 document; throws `invalid` when it is not one, leaving nothing changed. */
export function readOpml(text: string): OpmlFeeds {
  if (typeof text !== 'string') throw new SyncError('invalid', 'importOpml takes the text of an OPML file (a string): read the file first, for example with `await file.text()`');
  if (text.length > MAX_OPML_LENGTH)
    throw new SyncError('invalid', `this OPML file is ${text.length} characters long, over the ${MAX_OPML_LENGTH} read: it is not a list of podcasts; check that the right file was chosen`);
  const Parser = globalThis.DOMParser;
  if (!Parser) throw new SyncError('unsupported', 'OPML is read with the page\'s DOMParser, and there is none here: import OPML on the page, not in a worker');
  // A BOM is not part of the document; some exporters write one before the XML declaration, where it is an error.
  const doc = parse(new Parser(), text.replace(/^\uFEFF/, ''));
  const root = doc?.documentElement;
  if (!doc || !root || doc.getElementsByTagName('parsererror').length || root.localName === 'parsererror')
    throw new SyncError('invalid', 'this file is not well-formed XML, so it is not OPML: export the subscriptions from the other player again, as OPML');
  if (root.localName.toLowerCase() !== 'opml' || !childNamed(root, 'body'))
    throw new SyncError('invalid', `this XML file is not OPML (its root is <${root.localName}>, with no <body>): choose the OPML export of the other player`);
  const outlines = root.getElementsByTagName('outline');
  if (outlines.length > MAX_OPML_OUTLINES)
    throw new SyncError('invalid', `this OPML file has ${outlines.length} outlines, over the ${MAX_OPML_OUTLINES} read: split it into smaller files and import each`);
  const feeds: string[] = [];
  const seen = new Set<string>();
  const skipped: OpmlSkip[] = [];
  for (const outline of Array.from(outlines)) {
    // Attribute names in any case: exporters write xmlUrl, xmlurl and XMLURL.
    const raw = Array.from(outline.attributes).find((a) => a.name.toLowerCase() === 'xmlurl')?.value;
    if (raw === undefined) {
      // An outline with outlines inside is a category (a folder); one without is an entry that names no feed.
      if (!childNamed(outline, 'outline')) skipped.push({ reason: 'no-feed-url' });
      continue;
    }
    const url = feedUrlOf(raw);
    if (url === undefined) skipped.push({ url: raw, reason: 'not-a-feed-url' });
    else if (seen.has(url)) skipped.push({ url, reason: 'duplicate' });
    else {
      seen.add(url);
      feeds.push(url);
    }
  }
  return { feeds, skipped };
}

/** Parse as XML; a parser that throws on bad input (some do, instead of a `parsererror` document) gives undefined. */
function parse(parser: DOMParser, text: string): Document | undefined {
  try {
    return parser.parseFromString(text, 'text/xml');
  } catch {
    return undefined;
  }
}

function childNamed(element: Element, name: string): Element | undefined {
  return Array.from(element.childNodes).find((n): n is Element => n.nodeType === 1 && (n as Element).localName.toLowerCase() === name);
}

/** Options of `writeOpml`. */
export interface OpmlWriteOptions {
  /** The document's `<title>`. */
  title?: string;
  /** The `<dateCreated>`; now when absent. */
  date?: Date;
}

/** An OPML 2.0 document of these feeds, well-formed for any URL and title. */
export function writeOpml(feeds: readonly OpmlFeed[], opts: OpmlWriteOptions = {}): string {
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<opml version="2.0">',
    '  <head>',
    `    <title>${escapeXml(opts.title ?? 'Podcast subscriptions')}</title>`,
    `    <dateCreated>${(opts.date ?? new Date()).toUTCString()}</dateCreated>`,
    '  </head>',
    '  <body>',
  ];
  for (const feed of feeds) {
    const title = escapeXml(feed.title ?? feed.feedUrl);
    // A character XML cannot hold, even as a reference: the URL as a URL parser reads it (the same address).
    const url = feed.feedUrl.search(NOT_XML) < 0 ? feed.feedUrl : new URL(feed.feedUrl).href;
    lines.push(`    <outline type="rss" text="${title}" title="${title}" xmlUrl="${escapeXml(url)}"/>`);
  }
  lines.push('  </body>', '</opml>', '');
  return lines.join('\n');
}

/** Characters XML 1.0 cannot hold, raw or as a reference. */
const NOT_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|\p{Cs}/gu;

const REFERENCES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;', '\t': '&#9;', '\n': '&#10;', '\r': '&#13;' };

/**
 * Text as XML character data or an attribute value: markup characters, tabs and line breaks as references (an
 * attribute value would read the last three back as spaces), characters XML cannot hold at all dropped.
 */
export function escapeXml(text: string): string {
  return text.replace(NOT_XML, '').replace(/[&<>"'\t\n\r]/g, (char) => REFERENCES[char]!);
}
