// Storage trouble for the chaos suite: make one database's object stores refuse writes with QuotaExceededError
// (fake-indexeddb, patched on IDBObjectStore.prototype for that database name only, so parallel tests are safe).

/** Options of `failWrites`. */
export interface WriteFault {
  /** Only this object store (default: every store of the database). */
  store?: string;
  /** Let this many writes through first. @default 0 */
  after?: number;
}

/** Make writes to `dbName` throw QuotaExceededError until the returned function is called. */
export function failWrites(dbName: string, fault: WriteFault = {}): { restore(): void; readonly refused: number } {
  const proto = (globalThis as unknown as { IDBObjectStore: { prototype: Record<string, (...args: unknown[]) => unknown> } }).IDBObjectStore.prototype;
  const originals = { put: proto.put!, add: proto.add! };
  let seen = 0;
  let refused = 0;
  for (const method of ['put', 'add'] as const) {
    const original = originals[method];
    proto[method] = function (this: { name: string; transaction: { db: { name: string } } }, ...args: unknown[]) {
      if (this.transaction.db.name === dbName && (fault.store === undefined || this.name === fault.store) && ++seen > (fault.after ?? 0)) {
        refused++;
        throw new DOMException(`the quota for ${dbName} is exhausted`, 'QuotaExceededError');
      }
      return original.apply(this, args);
    };
  }
  return {
    restore() {
      proto.put = originals.put;
      proto.add = originals.add;
    },
    get refused() {
      return refused;
    },
  };
}
