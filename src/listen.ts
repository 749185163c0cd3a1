// The page's own event listening, for the client and its last-chance sender alike.

/** One listener: on the window (`'w'`) or the document (`'d'`), where the page has them. */
export type Signal = ['w' | 'd', string, (event: Event) => void];

/** Add every listener (none outside a page, as in a worker or Node); returns what removes them. */
export function listen(signals: readonly Signal[]): () => void {
  const each = (how: 'addEventListener' | 'removeEventListener') => () => {
    for (const [where, type, fn] of signals) (where === 'w' ? globalThis.window : globalThis.document)?.[how]?.(type, fn);
  };
  each('addEventListener')();
  return each('removeEventListener');
}
