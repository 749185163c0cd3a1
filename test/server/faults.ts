import type { FaultMatch, FaultOptions, RefServer } from './types.ts';

/** One queued fault: what it does, to which requests, how many more times. */
export interface FaultRule extends FaultOptions {
  kind: 'fail' | 'drop' | 'malform';
  remaining: number;
  match?: FaultMatch;
  /** Status of a `fail`. */
  status?: number;
}

/** The queue of faults waiting for matching /v1 requests. */
export interface Faults {
  add(rule: FaultRule): void;
  /** The first rule matching this request, used up by one; undefined when none applies. */
  take(method: string, path: string): FaultRule | undefined;
  clear(): void;
}

/** Whether a rule's match selects a request; a `path` rule also matches the part of `path` after `prefix`. */
export function matches(match: FaultMatch | undefined, method: string, path: string, prefix = '/v1'): boolean {
  // Preflights stay out of reach unless a rule names OPTIONS: a failed preflight is not what callers mean.
  if (method === 'OPTIONS' && match?.method?.toUpperCase() !== 'OPTIONS') return false;
  if (!match) return true;
  if (match.method && match.method.toUpperCase() !== method) return false;
  const rel = path.startsWith(prefix) ? path.slice(prefix.length) || '/' : path;
  if (typeof match.path === 'string') return match.path === path || match.path === rel;
  if (match.path instanceof RegExp) {
    match.path.lastIndex = 0; // a /g or /y pattern keeps state between tests
    return match.path.test(rel) || match.path.test(path);
  }
  return true;
}

/** Create an empty fault queue; rules apply in the order they were added; paths below `prefix` match too. */
export function createFaults(prefix = '/v1'): Faults {
  let rules: FaultRule[] = [];
  return {
    add(rule) {
      if (rule.remaining > 0) rules.push({ ...rule });
    },
    take(method, path) {
      const rule = rules.find((r) => matches(r.match, method, path, prefix));
      if (!rule) return undefined;
      rule.remaining--;
      if (rule.remaining <= 0) rules = rules.filter((r) => r !== rule);
      return rule;
    },
    clear() {
      rules = [];
    },
  };
}

/** The fault controls both reference servers offer, over one queue. */
export function faultControls(faults: Faults): Pick<RefServer, 'failNext' | 'dropNext' | 'malformNext' | 'clearFaults'> {
  return {
    failNext: (count, status, match, o) => faults.add({ ...o, kind: 'fail', remaining: count, status, match }),
    dropNext: (count, match, o) => faults.add({ ...o, kind: 'drop', remaining: count, match }),
    malformNext: (count, match, body, o) => faults.add({ ...o, kind: 'malform', remaining: count, match, body }),
    clearFaults: () => faults.clear(),
  };
}
