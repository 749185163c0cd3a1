// What both cold-open pages render: one list item per subscription, its feed URL, in one DOM insertion.

/** Render `urls` as the page's list; resolves the time (ms since navigation start) the rows are in the DOM. */
export function showRows(urls: string[]): number {
  const list = document.createElement('ul');
  for (const url of urls) {
    const item = document.createElement('li');
    item.textContent = url;
    list.append(item);
  }
  document.body.append(list);
  return performance.now();
}

/** What a cold-open page leaves on `window.opened` for the runner. */
export interface Opened {
  /** Navigation start → the rows in the DOM. */
  ms: number;
  rows: number;
  /** The library's page: navigation start → the `ready` snapshot. */
  readyMs?: number;
}

declare global {
  interface Window {
    opened?: Opened;
  }
}
