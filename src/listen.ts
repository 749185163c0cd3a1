// The page's own event listening, for the client and its last-chance sender alike.

/** One listener: on the window (`'w'`) or the document (`'d'`), where the page has them. */
export type Signal = ['w' | 'd', string, (event: Event) => void];

/** Add every listener (none outside a page, as in a worker or Node); returns what removes them. */
export function listen(signals: readonly Signal[]): () => void {
  const at = (where: 'w' | 'd'): EventTarget | undefined => {
    const target = (where === 'w' ? globalThis.window : globalThis.document) as EventTarget | undefined;
    return typeof target?.addEventListener === 'function' ? target : undefined;
  };
  for (const [where, type, fn] of signals) at(where)?.addEventListener(type, fn);
  return () => {
    for (const [where, type, fn] of signals) at(where)?.removeEventListener(type, fn);
  };
}
