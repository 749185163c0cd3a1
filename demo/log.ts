// The event log: what the engine reported (change/status events, errors with their code) and what the
// user did, newest first.
import { h } from './dom.ts';
import { clock, errorInfo, errorText } from './format.ts';

/** Kinds of log lines (also their CSS tag). */
export type LogKind = 'sync' | 'change' | 'status' | 'error' | 'action' | 'server';

/** The log view. */
export interface Log {
  add(kind: LogKind, text: string): void;
  /** Log a failed action with the error's code and status. */
  error(action: string, error: unknown): void;
}

const MAX_LINES = 300;

/** Attach the log to its list and clear button. */
export function createLog(list: HTMLOListElement, clearButton: HTMLButtonElement): Log {
  clearButton.addEventListener('click', () => list.replaceChildren());
  const add = (kind: LogKind, text: string): void => {
    // The same line again (a playing episode changes every second) bumps a counter on the newest line.
    const top = list.firstElementChild as HTMLLIElement | null;
    if (top && top.dataset.kind === kind && top.querySelector('.log-text')?.textContent === text) {
      const repeats = Number(top.dataset.repeats ?? '1') + 1;
      top.dataset.repeats = String(repeats);
      top.querySelector('time')!.textContent = clock(Date.now());
      top.querySelector('.log-repeats')!.textContent = `×${repeats}`;
      return;
    }
    const line = h(
      'li',
      { class: `log-line log-${kind}`, 'data-kind': kind },
      h('time', {}, clock(Date.now())),
      h('span', { class: `tag tag-${kind}` }, kind),
      h('span', { class: 'log-text' }, text),
      h('span', { class: 'log-repeats' }),
    );
    list.prepend(line);
    while (list.childElementCount > MAX_LINES) list.lastElementChild?.remove();
  };
  return {
    add,
    error: (action, error) => add('error', `${action} failed: ${errorText(errorInfo(error))}`),
  };
}
