// The incremental reader of `{ "actions": [...], "timestamp": N }` (worker/json-stream.ts): on any text, in any
// chunks, it agrees with JSON.parse — the same items and members for a valid object, a refusal (bad-response) for
// anything JSON.parse refuses.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createListReader, MAX_DEPTH, type ListReaderResult } from '../../worker/json-stream.ts';

const seed = 1812;

/** Read `chunks` as one answer; returns the items and the result, or the thrown error. */
function read(chunks: readonly string[], maxChars = 1 << 20): { items: unknown[]; result: ListReaderResult } | { error: unknown } {
  const items: unknown[] = [];
  try {
    const reader = createListReader({ what: 'test', list: 'actions', keep: ['timestamp', 'extra'], maxChars, item: (v) => items.push(v) });
    for (const chunk of chunks) reader.write(chunk);
    return { items, result: reader.end() };
  } catch (error) {
    return { error };
  }
}

/** Cut `text` at the given fractions. */
function cut(text: string, at: readonly number[]): string[] {
  const points = [...new Set(at.map((f) => Math.floor(f * text.length)))].sort((a, b) => a - b);
  const out: string[] = [];
  let from = 0;
  for (const p of points) {
    out.push(text.slice(from, p));
    from = p;
  }
  out.push(text.slice(from));
  return out;
}

// Characters that matter to a JSON reader, and any code unit (lone surrogates included).
const unit = fc.oneof(
  fc.constantFrom('{', '}', '[', ']', '"', '\\', ',', ':', '/', '\u0000', '\n', '\t', '\u2028', 'é', '😀', '\ud800', 'a', '0', 'e'),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
);
const json = fc.jsonValue({ maxDepth: 4, stringUnit: unit });

/** A JSON text of `value` written as a server might: any JSON whitespace between tokens, escapes where none are needed, other number forms. */
type Pick = (min: number, max: number) => number;
function emit(value: unknown, pick: Pick): string {
  const ws = () => ['', '', ' ', '\n', '\t', '\r\n  '][pick(0, 5)]!;
  // Code unit by code unit: a lone surrogate is written as JSON.stringify writes it (an escape).
  const str = (s: string) =>
    `"${Array.from({ length: s.length }, (_, i) => {
      const c = s[i]!;
      if (/[a-z/]/.test(c) && pick(0, 9) === 0) return c === '/' ? '\\/' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
      return JSON.stringify(c).slice(1, -1);
    }).join('')}"`;
  if (typeof value === 'string') return str(value);
  if (typeof value === 'number') {
    const plain = JSON.stringify(value);
    if (Number.isInteger(value) && Math.abs(value) < 1e15 && pick(0, 3) === 0) return `${value < 0 ? '-' : ''}${Math.abs(value)}.0E+0`;
    return plain;
  }
  if (Array.isArray(value)) return `[${ws()}${value.map((v) => emit(v, pick)).join(`${ws()},${ws()}`)}${ws()}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).map(([k, v]) => `${str(k)}${ws()}:${ws()}${emit(v, pick)}`);
    return `{${ws()}${entries.join(`${ws()},${ws()}`)}${ws()}}`;
  }
  return JSON.stringify(value);
}

/** An envelope: the list, the kept members and others, in any order. */
const envelope = fc
  .record({
    actions: fc.array(json, { maxLength: 8 }),
    timestamp: fc.option(json, { nil: undefined }),
    others: fc.dictionary(fc.string({ unit, maxLength: 6 }), json, { maxKeys: 3 }),
    order: fc.array(fc.nat(), { minLength: 8, maxLength: 8 }),
  })
  .map(({ actions, timestamp, others, order }) => {
    const entries: [string, unknown][] = Object.entries(others).filter(([k]) => k !== 'actions' && k !== 'timestamp');
    entries.push(['actions', actions]);
    if (timestamp !== undefined) entries.push(['timestamp', timestamp]);
    const shuffled = entries.map((e, i) => [order[i % order.length]! + i / 100, e] as const).sort((a, b) => a[0] - b[0]).map(([, e]) => e);
    // Built by defineProperty: a "__proto__" key stays an own member, as JSON.parse makes it.
    const doc = {};
    for (const [k, v] of shuffled) Object.defineProperty(doc, k, { value: v, enumerable: true, configurable: true, writable: true });
    return doc as Record<string, unknown>;
  });

const chunking = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 });

describe('the incremental JSON reader', () => {
  it('agrees with JSON.parse on any envelope, in any chunks: every item in order, the kept members', () => {
    fc.assert(
      fc.property(envelope, chunking, fc.gen(), (doc, at, gen) => {
        const text = emit(doc, (min, max) => gen(fc.integer, { min, max }));
        const expected = JSON.parse(text) as Record<string, unknown>;
        const got = read(cut(text, at));
        if ('error' in got) throw got.error;
        expect(got.items).toEqual(expected.actions);
        expect(got.result.listed).toBe(true);
        expect(got.result.members.get('timestamp')).toEqual(expected.timestamp);
        expect(got.result.members.has('timestamp')).toBe('timestamp' in expected);
        expect(got.result.members.get('extra')).toEqual(expected.extra);
      }),
      { seed, numRuns: 400 },
    );
  });

  it('refuses what JSON.parse refuses and agrees on what it takes, whatever the text (mutated envelopes)', () => {
    const edit = fc.record({ at: fc.double({ min: 0, max: 1, noNaN: true }), kind: fc.nat(3), char: unit, len: fc.nat(6) });
    fc.assert(
      fc.property(envelope, fc.array(edit, { minLength: 1, maxLength: 3 }), chunking, (doc, edits, at) => {
        let text = JSON.stringify(doc);
        for (const e of edits) {
          const i = Math.floor(e.at * text.length);
          if (e.kind === 0) text = text.slice(0, i) + text.slice(i + 1 + e.len);
          else if (e.kind === 1) text = text.slice(0, i) + e.char + text.slice(i);
          else if (e.kind === 2) text = text.slice(0, i) + text.slice(i, i + e.len + 1) + text.slice(i);
          else text = text.slice(0, i) + e.char + text.slice(i + 1);
        }
        let expected: unknown;
        let valid = true;
        try {
          expected = JSON.parse(text);
        } catch {
          valid = false;
        }
        const got = read(cut(text, at));
        const isObject = typeof expected === 'object' && expected !== null && !Array.isArray(expected);
        if (!valid || !isObject) {
          expect('error' in got && got.error).toMatchObject({ name: 'SyncError', code: 'bad-response' });
          return;
        }
        if ('error' in got) {
          // The one valid document it refuses: the list member twice (its first items were handed out already).
          expect(got.error).toMatchObject({ code: 'bad-response', message: expect.stringContaining('appears twice') });
          expect(text.split('"actions"').length).toBeGreaterThan(2);
          return;
        }
        const o = expected as Record<string, unknown>;
        expect(got.result.listed).toBe(Array.isArray(o.actions));
        if (Array.isArray(o.actions)) expect(got.items).toEqual(o.actions);
        expect(got.result.members.get('timestamp')).toEqual(o.timestamp);
      }),
      { seed, numRuns: 1500 },
    );
  });

  it('reads strings with escapes, braces and brackets inside, split anywhere', () => {
    const text = '{"actions":[{"a":"}]{[\\"\\\\","b":"\\u007d\\ud83d\\ude00"},"x]",[],{}], "timestamp" : 12.5e1 }';
    for (let i = 0; i <= text.length; i++) {
      const got = read([text.slice(0, i), text.slice(i)]);
      expect(got).toEqual({ items: JSON.parse(text).actions, result: { listed: true, members: new Map([['timestamp', 125]]) } });
    }
  });

  it('refuses: an empty or cut-off text, a top level that is not an object, text after the end, nesting past the limit', () => {
    for (const text of ['', '   ', '{"actions":[1,2', '[1]', '"x"', '{} {}', '{"actions":[]}x', `{"actions":[${'['.repeat(MAX_DEPTH)}${']'.repeat(MAX_DEPTH)}]}`, '{"a":01}', '{"a":1.}', '{"a":-}', '{"a":tru}', '{"a":"\u0001"}', '{"a":"\\x"}', '{,}', '{"a":1,}', '[1,]']) {
      expect(read([text]), text).toMatchObject({ error: { name: 'SyncError', code: 'bad-response' } });
    }
    // Just under the limit is read.
    const deep = `{"actions":[${'['.repeat(MAX_DEPTH - 2)}${']'.repeat(MAX_DEPTH - 2)}]}`;
    expect(read([deep])).not.toHaveProperty('error');
  });

  it('an item or kept member longer than maxChars is handed out as undefined, and the items after it are read', () => {
    const long = 'x'.repeat(500);
    const got = read([`{"timestamp":"${long}","actions":[1,"${long}",{"k":["${long}"]},2]}`], 100);
    expect(got).toEqual({ items: [1, undefined, undefined, 2], result: { listed: true, members: new Map([['timestamp', undefined]]) } });
  });

  it('a list member that is not an array is not listed; a repeated key keeps the last value (a repeated list is refused)', () => {
    expect(read(['{"actions":{"0":1},"timestamp":1,"timestamp":2}'])).toEqual({ items: [], result: { listed: false, members: new Map([['timestamp', 2]]) } });
    expect(read(['{"actions":[1],"actions":[2]}'])).toMatchObject({ error: { code: 'bad-response' } });
  });
});
