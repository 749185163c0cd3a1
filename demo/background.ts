// The demo's Background Sync: its service worker (sw.ts) registered when the toggle is on, and the note the
// service worker leaves of what it sent while every page was closed (the next page load logs it).
import { del, get } from 'idb-keyval';

/** Where the service worker notes what it sent (idb-keyval: the page and the service worker both reach it). */
export const SW_SENT_NOTE = 'opa-sync-demo:sw-sent';

/** What the service worker sent since the last page load. */
export interface SwSentNote {
  requests: number;
  at: number;
}

/** Register the demo's service worker (a module: Vite serves it from source); a browser without one logs nothing. */
export function startServiceWorker(): void {
  navigator.serviceWorker?.register('/sw.ts', { type: 'module', scope: '/' }).catch((error: unknown) => console.warn('the demo service worker did not register', error));
}

/** Read a note and remove it (undefined when there is none, or IndexedDB is not there). */
export async function takeNote(key: string): Promise<SwSentNote | undefined> {
  try {
    const note = await get<SwSentNote>(key);
    if (note) await del(key);
    return note;
  } catch {
    return undefined;
  }
}
