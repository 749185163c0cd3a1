// Reading a JSON object as its text arrives. A long-used account's full history of episode actions is one answer
// of tens of MB; `JSON.parse` needs all of that text and then builds the whole array beside it. This reader follows
// only strings and brackets: it cuts each item of one top-level list out as it ends and parses it alone, and at the
// end parses the rest (the object with every item replaced by 0). `JSON.parse` reads every piece, so the text is
// checked as it would check the whole, and only the item being read is held (with the object's other members).
// Hand-rolled: a general streaming parser from npm costs 6 KiB gzip and up; this needs one list and a few members.
import { SyncError } from '../src/errors.ts';

/** How the reader is told what to keep. */
export interface ListReaderOptions {
  /** What the text is, for messages ("episode actions"). */
  what: string;
  /** The top-level member whose array items are handed out one by one. */
  list: string;
  /** Other top-level members whose values are kept (small ones: they are held whole). */
  keep: readonly string[];
  /**
   * An item longer than this (UTF-16 units) is neither held nor parsed: it is handed out as `undefined`. A kept
   * value longer than this written as JSON is `undefined` too.
   */
  maxChars: number;
  /** Each item of the list, in order, as `JSON.parse` reads it (`undefined` when over `maxChars`). */
  item(value: unknown): void;
}

/** What a whole document held besides the list's items. */
export interface ListReaderResult {
  /** Whether the list member was there and an array. */
  listed: boolean;
  /** The kept members present (a value over `maxChars` is there as `undefined`). */
  members: Map<string, unknown>;
}

/** An incremental reader of one JSON object. */
export interface ListReader {
  /** Read the next piece of the text; throws `bad-response` where it stops being JSON. */
  write(text: string): void;
  /** The text is complete: throws `bad-response` unless it was one whole JSON object. */
  end(): ListReaderResult;
}

/** Deepest nesting read; deeper is refused (no answer needs it, and the stack it would take is the server's to choose). */
export const MAX_DEPTH = 256;

const isSpace = (c: number) => c === 32 || c === 10 || c === 13 || c === 9;

/** Create a reader of `{ [list]: [items…], [kept]: … }` (members in any order, others checked and skipped). */
export function createListReader({ what, list, keep, maxChars, item }: ListReaderOptions): ListReader {
  const fail = (detail: string): never => {
    throw new SyncError('bad-response', `${what}: the body is not JSON (${detail})`);
  };
  const parse = (text: string): unknown => {
    try {
      return JSON.parse(text);
    } catch (error) {
      return fail((error as Error).message);
    }
  };
  /** The object without the list's items; the item being read (undefined once over `maxChars`) and its length. */
  const rest: string[] = [];
  let piece: string[] | undefined = [];
  let size = 0;
  /** Where the text being read goes: the item (inside the list) or the rest; it goes from `from` in the chunk on. */
  let inItem = false;
  let from = 0;
  let depth = 0;
  let done = false;
  let inString = false;
  let escaped = false;
  /** At depth 1: a string now is a key; the next character that is not white space starts `key`'s value. */
  let keyNext = false;
  let valueNext = false;
  /** The key being read (its pieces, from `keyFrom` in the chunk on), and the last one read. */
  let keyParts: string[] | undefined;
  let keyFrom = 0;
  let key: unknown;
  let listSeen = false;
  /** Inside the list; no item ended in it yet (`[ ]` holds none; `[1, ]` holds an empty one, which is refused). */
  let inList = false;
  let first = false;

  function hold(text: string, end: number): void {
    const part = text.slice(from, end);
    from = end;
    if (!inItem) rest.push(part);
    else if (piece && (size += part.length) > maxChars) piece = undefined;
    else piece?.push(part);
  }

  /** The item being read ends before `end`: parse it (a blank one is no item when `none` allows it). */
  function itemEnds(text: string, end: number, none = false): void {
    hold(text, end);
    const whole = piece?.join('');
    if (!(none && whole?.trim() === '')) {
      item(whole === undefined ? undefined : parse(whole));
      rest.push('0');
    }
    piece = [];
    size = 0;
    first = inItem = false;
  }

  function write(text: string): void {
    const n = text.length;
    from = 0;
    for (let at = 0; at < n; at++) {
      let c = text.charCodeAt(at);
      if (inString) {
        // The hot loop: most of a body is string content.
        for (; at < n; c = text.charCodeAt(++at)) {
          if (escaped) escaped = false;
          else if (c === 92) escaped = true;
          else if (c === 34) break;
        }
        if (at === n) break;
        inString = false;
        // A string item ends here; an object or array item at its closing bracket; a number or literal at what follows it.
        if (inItem && depth === 2) itemEnds(text, at + 1);
        if (keyParts) {
          keyParts.push(text.slice(keyFrom, at + 1));
          key = parse(keyParts.join(''));
          keyParts = undefined;
        }
        continue;
      }
      if (isSpace(c)) continue;
      if (done) fail('text after the end');
      if (valueNext) {
        valueNext = false;
        if (key === list) {
          // JSON.parse keeps the last of a repeated key, but the items of the first were handed out already.
          if (listSeen) throw new SyncError('bad-response', `${what}: the member "${list}" appears twice`);
          listSeen = true;
          if (c === 91) {
            hold(text, at + 1);
            inList = inItem = first = true;
            depth++;
            continue;
          }
        }
      }
      if (c === 34) {
        inString = true;
        if (keyNext) {
          keyNext = false;
          keyParts = [];
          keyFrom = at;
        }
      } else if (c === 123 || c === 91) {
        if (depth === 0 && c !== 123) fail('not an object');
        if (++depth > MAX_DEPTH) fail(`nested deeper than ${MAX_DEPTH}`);
        keyNext = depth === 1;
      } else if (c === 125 || c === 93) {
        if (inList && depth === 3 && inItem) itemEnds(text, at + 1);
        if (inList && depth === 2) {
          if (inItem) itemEnds(text, at, first);
          inList = false;
        }
        done = --depth === 0;
      } else if (c === 44) {
        keyNext = depth === 1;
        if (inList && depth === 2) {
          if (inItem) itemEnds(text, at);
          hold(text, at + 1);
          inItem = true;
        }
      } else if (c === 58 && depth === 1) valueNext = true;
    }
    if (keyParts) {
      keyParts.push(text.slice(keyFrom));
      keyFrom = 0;
    }
    hold(text, n);
  }

  return {
    write,
    end() {
      const o = parse(rest.join('')) as Record<string, unknown>;
      if (typeof o !== 'object' || o === null || Array.isArray(o)) fail('not an object');
      const members = new Map<string, unknown>();
      for (const k of keep) if (Object.hasOwn(o, k)) members.set(k, JSON.stringify(o[k]).length > maxChars ? undefined : o[k]);
      return { listed: Array.isArray(o[list]), members };
    },
  };
}
