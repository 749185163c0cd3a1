// What a gPodder server's `update_urls` mean: each URL it rewrote, and the URL that rewrite ends at.

/**
 * Where each rewritten URL ends up, following chains (a→b, b→c: a ends at c), so a row is only ever led to a
 * URL the server keeps, never to another old name. "" as the end means refused. Pairs in a loop (a→b, b→a), or
 * leading into one, name no URL to keep and are left out: each URL then stays a subscription of its own.
 */
export function renames(pairs: readonly (readonly [string, string])[]): Map<string, string> {
  const next = new Map<string, string>();
  for (const [from, to] of pairs) if (from !== '' && from !== to) next.set(from, to);
  const out = new Map<string, string>();
  for (const from of next.keys()) {
    const seen = new Set([from]);
    let at = next.get(from)!;
    while (next.has(at) && !seen.has(at)) {
      seen.add(at);
      at = next.get(at)!;
    }
    if (!seen.has(at)) out.set(from, at);
  }
  return out;
}
