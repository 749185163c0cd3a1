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

/** One reader's state between two characters (the steps below read and move it). */
interface Reader {
  readonly options: ListReaderOptions;
  readonly keep: ReadonlySet<string>;
  /** OBJECT or ARRAY per open bracket. */
  readonly stack: number[];
  readonly members: Map<string, unknown>;
  /** What comes next (VALUE, KEY, STRING…). */
  state: number;
  /** Whether the string being read is a key. */
  isKey: boolean;
  /** Where the number being read stands (N_…). */
  num: number;
  /** What is still to come of the literal being read. */
  lit: string;
  /** Hex digits of a \u escape still to come (0 until its `u`, and outside escapes). */
  hex: number;
  /** Characters of the earlier chunks (for messages). */
  read: number;
  /** The top-level key whose value comes next, and the list's state. */
  key: string | undefined;
  listSeen: boolean;
  listed: boolean;
  inList: boolean;
  /** The value (or key) being captured: what it is, its depth, its pieces so far, from `from` in the current chunk on. */
  capture: number;
  capDepth: number;
  parts: string[];
  size: number;
  over: boolean;
  from: number;
}

function fail(r: Reader, detail: string, at: number): never {
  throw new SyncError('bad-response', `${r.options.what}: the body is not JSON (${detail} at character ${r.read + at})`);
}

/** Add a piece of the captured text, unless it is over its limit already. */
function add(r: Reader, piece: string): void {
  if (r.over) return;
  r.size += piece.length;
  if (r.size > (r.capture === CAP_KEY ? MAX_KEY_CHARS : r.options.maxChars)) {
    r.over = true;
    r.parts = [];
  } else r.parts.push(piece);
}

/** Start capturing a key, an item or a kept member at `at`. */
function begin(r: Reader, kind: number, at: number): void {
  r.capture = kind;
  r.capDepth = r.stack.length;
  r.parts = [];
  r.size = 0;
  r.over = false;
  r.from = at;
}

/** The captured text ends just before `end`: parse it and hand it where it goes. */
function finish(r: Reader, text: string, end: number): void {
  add(r, text.slice(r.from, end));
  // Parsed only once the grammar check passed: JSON.parse agrees, and reads escapes and numbers exactly as it always does.
  const value = r.over ? undefined : JSON.parse(r.parts.length === 1 ? r.parts[0]! : r.parts.join(''));
  const kind = r.capture;
  r.capture = NONE;
  r.parts = [];
  if (kind === CAP_KEY) r.key = value as string | undefined;
  else if (kind === CAP_ITEM) r.options.item(value);
  else r.members.set(r.key!, value);
}

/** A value starts at `at`: capture it when it is a list item or a kept member. */
function starting(r: Reader, c: number, at: number): void {
  if (r.stack.length === 0) {
    if (c !== 123) fail(r, 'not an object', at);
    return;
  }
  if (r.stack.length === 2 && r.inList) begin(r, CAP_ITEM, at);
  else if (r.stack.length === 1 && r.key !== undefined) {
    if (r.key === r.options.list) {
      // JSON.parse keeps the last of a repeated key, but the items of the first were handed out already.
      if (r.listSeen) throw new SyncError('bad-response', `${r.options.what}: the member "${r.options.list}" appears twice`);
      r.listSeen = true;
      r.listed = r.inList = c === 91;
    } else if (r.keep.has(r.key)) begin(r, CAP_MEMBER, at);
  }
}

/** A value ended just before `end`. */
function ended(r: Reader, text: string, end: number): void {
  if ((r.capture === CAP_ITEM || r.capture === CAP_MEMBER) && r.stack.length === r.capDepth) finish(r, text, end);
  r.state = r.stack.length === 0 ? END : NEXT;
}

function open(r: Reader, kind: number, at: number): void {
  if (r.stack.length >= MAX_DEPTH) fail(r, `nested deeper than ${MAX_DEPTH}`, at);
  r.stack.push(kind);
  r.state = kind === OBJECT ? FIRST_KEY : FIRST_ITEM;
}

function close(r: Reader, text: string, at: number): void {
  r.stack.pop();
  if (r.stack.length === 1) r.inList = false;
  ended(r, text, at + 1);
}

// The steps: each reads from `text[i]` (`c`) in its state, and returns where the next one reads.

/** Inside a string: the hot loop, as most of a body is string content. */
function stringStep(r: Reader, text: string, i: number): number {
  const n = text.length;
  let j = i;
  let d = text.charCodeAt(i);
  while (d !== 34 && d !== 92 && d >= 32) {
    if (++j === n) return n;
    d = text.charCodeAt(j);
  }
  if (d < 32) fail(r, 'a control character in a string', j);
  if (d === 92) r.state = ESCAPE;
  else if (r.isKey) {
    if (r.capture === CAP_KEY) finish(r, text, j + 1);
    r.state = COLON;
  } else ended(r, text, j + 1);
  return j + 1;
}

/** After a backslash in a string, or in the hex digits of a \u escape. */
function escapeStep(r: Reader, c: number, i: number): number {
  if (r.hex) {
    if (!isHex(c)) fail(r, 'a bad \\u escape', i);
    if (--r.hex === 0) r.state = STRING;
  } else if (c === 117) r.hex = 4;
  else if (ESCAPES.has(c)) r.state = STRING;
  else fail(r, 'a bad escape', i);
  return i + 1;
}

/** Inside a number: a number ends at the first character that is not part of it, which is then read as what follows. */
function numberStep(r: Reader, text: string, c: number, i: number): number {
  const { num } = r;
  if (num === N_MINUS) {
    if (!isDigit(c)) fail(r, 'a bad number', i);
    r.num = c === 48 ? N_ZERO : N_INT;
  } else if (num === N_DOT || num === N_SIGN) {
    if (!isDigit(c)) fail(r, 'a bad number', i);
    r.num = num === N_DOT ? N_FRAC : N_EXP;
  } else if (num === N_E) {
    if (c === 43 || c === 45) r.num = N_SIGN;
    else if (isDigit(c)) r.num = N_EXP;
    else fail(r, 'a bad number', i);
  } else if (isDigit(c) && num !== N_ZERO) {
    // digits go on (a leading 0 takes none after it)
  } else if (c === 46 && (num === N_ZERO || num === N_INT)) r.num = N_DOT;
  else if ((c === 101 || c === 69) && num !== N_EXP) r.num = N_E;
  else {
    ended(r, text, i);
    return i;
  }
  return i + 1;
}

/** Inside `true`, `false` or `null`. */
function literalStep(r: Reader, text: string, c: number, i: number): number {
  if (c !== r.lit.charCodeAt(0)) fail(r, 'a bad literal', i);
  r.lit = r.lit.slice(1);
  if (!r.lit) ended(r, text, i + 1);
  return i + 1;
}

/** Where a value starts. */
function valueStep(r: Reader, c: number, i: number): number {
  if (isSpace(c)) return i + 1;
  starting(r, c, i);
  if (c === 123) open(r, OBJECT, i);
  else if (c === 91) open(r, ARRAY, i);
  else if (c === 34) {
    r.isKey = false;
    r.state = STRING;
  } else if (c === 45 || isDigit(c)) {
    r.state = NUMBER;
    r.num = c === 45 ? N_MINUS : c === 48 ? N_ZERO : N_INT;
  } else if (LITERALS[c]) {
    r.state = LITERAL;
    r.lit = LITERALS[c]!;
  } else fail(r, 'an unexpected character', i);
  return i + 1;
}

/** Where a key starts (or, first in an object, the object may end). */
function keyStep(r: Reader, text: string, c: number, i: number): number {
  if (isSpace(c)) return i + 1;
  if (c === 125 && r.state === FIRST_KEY) close(r, text, i);
  else if (c === 34) {
    r.isKey = true;
    r.state = STRING;
    if (r.stack.length === 1) {
      r.key = undefined;
      begin(r, CAP_KEY, i);
    }
  } else fail(r, 'a key expected', i);
  return i + 1;
}

/** Between tokens: a colon, a comma, a closing bracket, or only white space after the end. */
function punctuationStep(r: Reader, text: string, c: number, i: number): number {
  switch (r.state) {
    case COLON:
      if (c === 58) r.state = VALUE;
      else if (!isSpace(c)) fail(r, '":" expected', i);
      return i + 1;
    case FIRST_ITEM:
      if (c === 93) close(r, text, i);
      else if (!isSpace(c)) {
        r.state = VALUE;
        return i;
      }
      return i + 1;
    case NEXT: {
      const inObject = r.stack[r.stack.length - 1] === OBJECT;
      if (c === 44) r.state = inObject ? KEY : VALUE;
      else if (c === (inObject ? 125 : 93)) close(r, text, i);
      else if (!isSpace(c)) fail(r, '"," or a closing bracket expected', i);
      return i + 1;
    }
    default:
      if (!isSpace(c)) fail(r, 'text after the end', i);
      return i + 1;
  }
}

/** Read the next piece of the text. */
function write(r: Reader, text: string): void {
  const n = text.length;
  for (let i = 0; i < n; ) {
    const c = text.charCodeAt(i);
    switch (r.state) {
      case STRING:
        i = stringStep(r, text, i);
        break;
      case ESCAPE:
        i = escapeStep(r, c, i);
        break;
      case NUMBER:
        i = numberStep(r, text, c, i);
        break;
      case LITERAL:
        i = literalStep(r, text, c, i);
        break;
      case VALUE:
        i = valueStep(r, c, i);
        break;
      case FIRST_KEY:
      case KEY:
        i = keyStep(r, text, c, i);
        break;
      default:
        i = punctuationStep(r, text, c, i);
    }
  }
  if (r.capture !== NONE) {
    add(r, text.slice(r.from));
    r.from = 0;
  }
  r.read += n;
}

/** Create a reader of `{ [list]: [items…], [kept]: … }` (members in any order, others checked and skipped). */
export function createListReader(options: ListReaderOptions): ListReader {
  const r: Reader = {
    options,
    keep: new Set(options.keep),
    stack: [],
    members: new Map(),
    state: VALUE,
    isKey: false,
    num: N_MINUS,
    lit: '',
    hex: 0,
    read: 0,
    key: undefined,
    listSeen: false,
    listed: false,
    inList: false,
    capture: NONE,
    capDepth: 0,
    parts: [],
    size: 0,
    over: false,
    from: 0,
  };
  return {
    write: (text) => write(r, text),
    end() {
      if (r.state !== END) fail(r, r.read === 0 ? 'empty' : 'the text ends early', 0);
      return { listed: r.listed, members: r.members };
    },
  };
}
