// Reading a JSON object as its text arrives. A long-used account's full history of episode actions is one answer
// of tens of MB; `JSON.parse` needs all of that text and then builds the whole array beside it. This reader checks
// the JSON grammar one character at a time and hands out the items of one top-level list as each one ends, so
// only the item being read is held. Hand-rolled: a general streaming parser from npm costs 6 KiB gzip and up
// (the worker is over its budget already); this needs no tokens, paths or events, only one list and a few members.
import { SyncError } from '../src/errors.ts';

/** How the reader is told what to keep. */
export interface ListReaderOptions {
  /** What the text is, for messages ("episode actions"). */
  what: string;
  /** The top-level member whose array items are handed out one by one. */
  list: string;
  /** Other top-level members whose values are kept (small ones: they are held whole). */
  keep: readonly string[];
  /** An item or kept value longer than this (UTF-16 units) is not parsed: it is handed out as `undefined`. */
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
/** Longest top-level key compared with the wanted ones (`"actions"` fully escaped is 44 characters). */
const MAX_KEY_CHARS = 256;

// What comes next.
const VALUE = 0;
const FIRST_KEY = 1;
const KEY = 2;
const COLON = 3;
const FIRST_ITEM = 4;
const NEXT = 5;
const STRING = 6;
const ESCAPE = 7;
const NUMBER = 8;
const LITERAL = 9;
const END = 10;
// Where a number stands: after '-', after a leading 0, in the integer, after '.', in the fraction, after 'e', after its sign, in the exponent.
const N_MINUS = 0;
const N_ZERO = 1;
const N_INT = 2;
const N_DOT = 3;
const N_FRAC = 4;
const N_E = 5;
const N_SIGN = 6;
const N_EXP = 7;
// What is being captured.
const NONE = 0;
const CAP_KEY = 1;
const CAP_ITEM = 2;
const CAP_MEMBER = 3;

const OBJECT = 1;
const ARRAY = 2;

const isDigit = (c: number) => c >= 48 && c <= 57;
const isSpace = (c: number) => c === 32 || c === 10 || c === 13 || c === 9;
const isHex = (c: number) => isDigit(c) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
/** What is left of `true`, `false` or `null` after its first character. */
const LITERALS: Record<number, string> = { 116: 'rue', 102: 'alse', 110: 'ull' };

const ESCAPES = new Set([...'"\\/bfnrt'].map((c) => c.charCodeAt(0)));

/** Create a reader of `{ [list]: [items…], [kept]: … }` (members in any order, others checked and skipped). */
export function createListReader(options: ListReaderOptions): ListReader {
  // The reader's state between two characters: the steps below read and move it.
  const { what, list, maxChars } = options;
  const keep = new Set(options.keep);
  /** OBJECT or ARRAY per open bracket. */
  const stack: number[] = [];
  const members = new Map<string, unknown>();
  /** What comes next (VALUE, KEY, STRING…). */
  let state = VALUE;
  /** Whether the string being read is a key. */
  let isKey = false;
  /** Where the number being read stands (N_…). */
  let num = N_MINUS;
  /** What is still to come of the literal being read. */
  let lit = '';
  /** Hex digits of a \u escape still to come (0 until its `u`, and outside escapes). */
  let hex = 0;
  /** Characters of the earlier chunks (for messages). */
  let read = 0;
  /** The top-level key whose value comes next, and the list's state. */
  let key: string | undefined;
  let listSeen = false;
  let listed = false;
  let inList = false;
  /** The value (or key) being captured: what it is, its depth, its pieces so far, from `from` in the current chunk on. */
  let capture = NONE;
  let capDepth = 0;
  let parts: string[] = [];
  let size = 0;
  let over = false;
  let from = 0;

  function fail(detail: string, at: number): never {
    throw new SyncError('bad-response', `${what}: the body is not JSON (${detail} at character ${read + at})`);
  }

  /** Add a piece of the captured text, unless it is over its limit already. */
  function add(piece: string): void {
    if (over) return;
    size += piece.length;
    if (size > (capture === CAP_KEY ? MAX_KEY_CHARS : maxChars)) {
      over = true;
      parts = [];
    } else parts.push(piece);
  }

  /** Start capturing a key, an item or a kept member at `at`. */
  function begin(kind: number, at: number): void {
    capture = kind;
    capDepth = stack.length;
    parts = [];
    size = 0;
    over = false;
    from = at;
  }

  /** The captured text ends just before `end`: parse it and hand it where it goes. */
  function finish(text: string, end: number): void {
    add(text.slice(from, end));
    // Parsed only once the grammar check passed: JSON.parse agrees, and reads escapes and numbers exactly as it always does.
    const value = over ? undefined : JSON.parse(parts.length === 1 ? parts[0]! : parts.join(''));
    const kind = capture;
    capture = NONE;
    parts = [];
    if (kind === CAP_KEY) key = value as string | undefined;
    else if (kind === CAP_ITEM) options.item(value);
    else members.set(key!, value);
  }

  /** A value starts at `at`: capture it when it is a list item or a kept member. */
  function starting(c: number, at: number): void {
    if (stack.length === 0) {
      if (c !== 123) fail('not an object', at);
      return;
    }
    if (stack.length === 2 && inList) begin(CAP_ITEM, at);
    else if (stack.length === 1 && key !== undefined) {
      if (key === list) {
        // JSON.parse keeps the last of a repeated key, but the items of the first were handed out already.
        if (listSeen) throw new SyncError('bad-response', `${what}: the member "${list}" appears twice`);
        listSeen = true;
        listed = inList = c === 91;
      } else if (keep.has(key)) begin(CAP_MEMBER, at);
    }
  }

  /** A value ended just before `end`. */
  function ended(text: string, end: number): void {
    if ((capture === CAP_ITEM || capture === CAP_MEMBER) && stack.length === capDepth) finish(text, end);
    state = stack.length === 0 ? END : NEXT;
  }

  function open(kind: number, at: number): void {
    if (stack.length >= MAX_DEPTH) fail(`nested deeper than ${MAX_DEPTH}`, at);
    stack.push(kind);
    state = kind === OBJECT ? FIRST_KEY : FIRST_ITEM;
  }

  function close(text: string, at: number): void {
    stack.pop();
    if (stack.length === 1) inList = false;
    ended(text, at + 1);
  }

  // The steps: each reads from `text[i]` (`c`) in its state, and returns where the next one reads.

  /** Inside a string: the hot loop, as most of a body is string content. */
  function stringStep(text: string, i: number): number {
    const n = text.length;
    let j = i;
    let d = text.charCodeAt(i);
    while (d !== 34 && d !== 92 && d >= 32) {
      if (++j === n) return n;
      d = text.charCodeAt(j);
    }
    if (d < 32) fail('a control character in a string', j);
    if (d === 92) state = ESCAPE;
    else if (isKey) {
      if (capture === CAP_KEY) finish(text, j + 1);
      state = COLON;
    } else ended(text, j + 1);
    return j + 1;
  }

  /** After a backslash in a string, or in the hex digits of a \u escape. */
  function escapeStep(c: number, i: number): number {
    if (hex) {
      if (!isHex(c)) fail('a bad \\u escape', i);
      if (--hex === 0) state = STRING;
    } else if (c === 117) hex = 4;
    else if (ESCAPES.has(c)) state = STRING;
    else fail('a bad escape', i);
    return i + 1;
  }

  /** Inside a number: a number ends at the first character that is not part of it, which is then read as what follows. */
  function numberStep(text: string, c: number, i: number): number {
    if (num === N_MINUS) {
      if (!isDigit(c)) fail('a bad number', i);
      num = c === 48 ? N_ZERO : N_INT;
    } else if (num === N_DOT || num === N_SIGN) {
      if (!isDigit(c)) fail('a bad number', i);
      num = num === N_DOT ? N_FRAC : N_EXP;
    } else if (num === N_E) {
      if (c === 43 || c === 45) num = N_SIGN;
      else if (isDigit(c)) num = N_EXP;
      else fail('a bad number', i);
    } else if (isDigit(c) && num !== N_ZERO) {
      // digits go on (a leading 0 takes none after it)
    } else if (c === 46 && (num === N_ZERO || num === N_INT)) num = N_DOT;
    else if ((c === 101 || c === 69) && num !== N_EXP) num = N_E;
    else {
      ended(text, i);
      return i;
    }
    return i + 1;
  }

  /** Inside `true`, `false` or `null`. */
  function literalStep(text: string, c: number, i: number): number {
    if (c !== lit.charCodeAt(0)) fail('a bad literal', i);
    lit = lit.slice(1);
    if (!lit) ended(text, i + 1);
    return i + 1;
  }

  /** Where a value starts. */
  function valueStep(c: number, i: number): number {
    if (isSpace(c)) return i + 1;
    starting(c, i);
    if (c === 123) open(OBJECT, i);
    else if (c === 91) open(ARRAY, i);
    else if (c === 34) {
      isKey = false;
      state = STRING;
    } else if (c === 45 || isDigit(c)) {
      state = NUMBER;
      num = c === 45 ? N_MINUS : c === 48 ? N_ZERO : N_INT;
    } else if (LITERALS[c]) {
      state = LITERAL;
      lit = LITERALS[c]!;
    } else fail('an unexpected character', i);
    return i + 1;
  }

  /** Where a key starts (or, first in an object, the object may end). */
  function keyStep(text: string, c: number, i: number): number {
    if (isSpace(c)) return i + 1;
    if (c === 125 && state === FIRST_KEY) close(text, i);
    else if (c === 34) {
      isKey = true;
      state = STRING;
      if (stack.length === 1) {
        key = undefined;
        begin(CAP_KEY, i);
      }
    } else fail('a key expected', i);
    return i + 1;
  }

  /** Between tokens: a colon, a comma, a closing bracket, or only white space after the end. */
  function punctuationStep(text: string, c: number, i: number): number {
    switch (state) {
      case COLON:
        if (c === 58) state = VALUE;
        else if (!isSpace(c)) fail('":" expected', i);
        return i + 1;
      case FIRST_ITEM:
        if (c === 93) close(text, i);
        else if (!isSpace(c)) {
          state = VALUE;
          return i;
        }
        return i + 1;
      case NEXT: {
        const inObject = stack[stack.length - 1] === OBJECT;
        if (c === 44) state = inObject ? KEY : VALUE;
        else if (c === (inObject ? 125 : 93)) close(text, i);
        else if (!isSpace(c)) fail('"," or a closing bracket expected', i);
        return i + 1;
      }
      default:
        if (!isSpace(c)) fail('text after the end', i);
        return i + 1;
    }
  }

  /** Read the next piece of the text. */
  function write(text: string): void {
    const n = text.length;
    for (let i = 0; i < n; ) {
      const c = text.charCodeAt(i);
      switch (state) {
        case STRING:
          i = stringStep(text, i);
          break;
        case ESCAPE:
          i = escapeStep(c, i);
          break;
        case NUMBER:
          i = numberStep(text, c, i);
          break;
        case LITERAL:
          i = literalStep(text, c, i);
          break;
        case VALUE:
          i = valueStep(c, i);
          break;
        case FIRST_KEY:
        case KEY:
          i = keyStep(text, c, i);
          break;
        default:
          i = punctuationStep(text, c, i);
      }
    }
    if (capture !== NONE) {
      add(text.slice(from));
      from = 0;
    }
    read += n;
  }

  return {
    write,
    end() {
      if (state !== END) fail(read === 0 ? 'empty' : 'the text ends early', 0);
      return { listed, members };
    },
  };
}
