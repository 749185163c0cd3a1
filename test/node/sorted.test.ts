// The store's sorted list patched in place (src/sorted.ts): the rows a change re-read replace, join or leave
// the list at their place by guid, equal rows stay the objects they were, and the list given is never touched.
import { describe, expect, it } from 'vitest';
import { patchSorted } from '../../src/sorted.ts';

type R = { guid: string; v: number };
const r = (guid: string, v = 0): R => ({ guid, v });
const keep = (was: R | undefined, now: R) => (was && was.v === now.v ? was : now);
const list = Object.freeze(['b', 'd', 'f', 'h'].map((g) => r(g)));

describe('patchSorted', () => {
  it('replaces a changed row at its place and keeps the others as they were', () => {
    const out = patchSorted(list, ['f'], [r('f', 1)], keep);
    expect(out.map((x) => x.guid)).toEqual(['b', 'd', 'f', 'h']);
    expect(out[2]).toEqual(r('f', 1));
    expect(out[0]).toBe(list[0]);
    expect(list[2]).toEqual(r('f'));
  });

  it('inserts a new row in guid order, at either end too, and removes a row the read did not find', () => {
    const out = patchSorted(list, ['a', 'e', 'z', 'd'], [r('z'), r('e'), r('a')], keep);
    expect(out.map((x) => x.guid)).toEqual(['a', 'b', 'e', 'f', 'h', 'z']);
    expect(patchSorted([], ['c'], [r('c')], keep).map((x) => x.guid)).toEqual(['c']);
  });

  it('is the list itself when no row changed (equal rows, a removal of a row it never had)', () => {
    expect(patchSorted(list, ['b', 'h', 'x'], [r('b'), r('h')], keep)).toBe(list);
  });

  it('places a row the read returned under a guid not asked for, once', () => {
    const out = patchSorted(list, ['b'], [r('b'), r('d', 2)], keep);
    expect(out.map((x) => x.guid)).toEqual(['b', 'd', 'f', 'h']);
    expect(out[1]).toEqual(r('d', 2));
  });

  it('orders guids as IndexedDB does (by UTF-16 code units), as a full sort would', () => {
    const guids = ['Z', 'a', 'é', '😀', '10', '9', 'ß', 'A'];
    let out: readonly R[] = [];
    for (const g of guids) out = patchSorted(out, [g], [r(g)], keep);
    expect(out.map((x) => x.guid)).toEqual([...guids].sort((a, b) => (a < b ? -1 : 1)));
  });
});
