import { randomBytes } from 'node:crypto';

/** A seeded pseudo-random source, so reorders and seed data repeat from run to run. */
export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [0, n). */
  int(n: number): number;
  /** One element of a non-empty list. */
  pick<T>(list: readonly T[]): T;
  /** A version-4 shaped UUID. */
  uuid(): string;
  /** Shuffle a copy of `list` (Fisher-Yates). */
  shuffled<T>(list: readonly T[]): T[];
  /** Where the sequence stands: `createRandom(state())` goes on with the very same numbers (kept by `--data`). */
  state(): number;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const hex4 = (n: number): string => HEX[(n >>> 8) & 0xff] + HEX[n & 0xff];
const hex8 = (n: number): string => hex4(n >>> 16) + hex4(n & 0xffff);

/** A seed nobody chose: each run of a server that was not given one hands out other guids. */
export function freshSeed(): number {
  return randomBytes(4).readUInt32LE(0);
}

/** Create a random source from a 32-bit seed (mulberry32). */
export function createRandom(seed: number): Random {
  let state = seed >>> 0;
  const u32 = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
  const next = (): number => u32() / 0x1_0000_0000;
  const int = (n: number): number => Math.floor(next() * n);
  return {
    next,
    int,
    state: () => state,
    pick: (list) => list[int(list.length)],
    uuid() {
      const a = u32();
      const b = u32();
      const c = u32();
      const d = u32();
      // Version 4 in the third group's top nibble, variant 10xx in the fourth's.
      return (
        hex8(a) + '-' + hex4(b >>> 16) + '-' + hex4(((b & 0x0fff) | 0x4000) >>> 0) + '-' +
        hex4(((c >>> 16) & 0x3fff) | 0x8000) + '-' + hex4(c & 0xffff) + hex8(d)
      );
    },
    shuffled(list) {
      const out = list.slice();
      for (let i = out.length - 1; i > 0; i--) {
        const j = int(i + 1);
        const t = out[i];
        out[i] = out[j];
        out[j] = t;
      }
      return out;
    },
  };
}
