// A Web Locks stand-in for node tests of leadership: each lock is granted only when the test says so.

type Holder = () => Promise<void>;

/** A Web Locks stand-in on `navigator` that grants each lock only when the test says so. */
export function slowLocks() {
  const waiting: Holder[] = [];
  const nav = globalThis as { navigator?: unknown };
  const before = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
  Object.defineProperty(globalThis, 'navigator', {
    configurable: true,
    value: {
      locks: {
        request(_name: string, _options: unknown, callback: Holder) {
          return new Promise<void>((resolve) => waiting.push(() => callback().then(resolve)));
        },
      },
    },
  });
  return {
    grant: () => void waiting.shift()?.(),
    restore: () => (before ? Object.defineProperty(globalThis, 'navigator', before) : delete nav.navigator),
  };
}

