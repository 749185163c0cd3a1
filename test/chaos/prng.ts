// A small seeded PRNG (mulberry32) so a failing chaos run can be replayed from its seed.

/** A deterministic random source. */
export interface Prng {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number;
  /** True with probability `p`. */
  chance(p: number): boolean;
  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T;
  /** A key chosen with probability proportional to its weight. */
  weighted<K extends string>(weights: Record<K, number>): K;
  /** An independent stream derived from this seed (so one part's draws do not shift another's). */
  fork(salt: number): Prng;
}

/** Create a PRNG from a 32-bit seed. */
export function prng(seed: number): Prng {
  let state = seed >>> 0 || 0x9e3779b9;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const api: Prng = {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    chance: (p) => next() < p,
    pick: (items) => {
      if (!items.length) throw new Error('pick from an empty list');
      return items[Math.floor(next() * items.length)]!;
    },
    weighted(weights) {
      const entries = Object.entries(weights) as [keyof typeof weights, number][];
      const total = entries.reduce((sum, [, w]) => sum + Math.max(0, w), 0);
      let r = next() * total;
      for (const [key, w] of entries) {
        r -= Math.max(0, w);
        if (r < 0) return key;
      }
      return entries[entries.length - 1]![0];
    },
    fork: (salt) => prng((seed ^ Math.imul(salt, 0x9e3779b1)) >>> 0),
  };
  return api;
}
