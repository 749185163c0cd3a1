// Logs what the engine reports: change events, status transitions and each new error with its code.
import { clock, errorText } from './format.ts';
import type { Log } from './log.ts';
import { SW_SENT_NOTE, takeNote } from './background.ts';
import { LAST_CHANCE_NOTE, type Session } from './session.ts';

/** `a, b, c and 4 more`. */
function few(items: string[]): string {
  return `${items.slice(0, 3).join(', ')}${items.length > 3 ? ` and ${items.length - 3} more` : ''}`;
}

/** Log the last-chance send the page made as it went away last time (noted in sessionStorage), once. */
function logLastChance(log: Log): void {
  const note = sessionStorage.getItem(LAST_CHANCE_NOTE);
  if (!note) return;
  sessionStorage.removeItem(LAST_CHANCE_NOTE);
  try {
    const sent = JSON.parse(note) as { requests: number; bytes: number; reason: string; at: number };
    log.add('sync', `last chance at ${clock(sent.at)}: the page sent ${sent.requests} request${sent.requests === 1 ? '' : 's'} (${sent.bytes} bytes) with keepalive on ${sent.reason}`);
  } catch {
    // A note of another version: nothing to show.
  }
}

/** Log what the demo's service worker sent while every page was closed (noted in IndexedDB), once. */
async function logServiceWorkerSends(log: Log): Promise<void> {
  const sent = await takeNote(SW_SENT_NOTE);
  if (sent) log.add('sync', `sent by the service worker at ${clock(sent.at)}: ${sent.requests} request${sent.requests === 1 ? '' : 's'} the server accepted, with every page closed`);
}

/** Log the session's engine events. */
export function logEngineEvents(session: Session, log: Log): void {
  logLastChance(log);
  void logServiceWorkerSends(log);
  let lastState = '';
  let lastBackground: string | undefined;
  let lastError = '';
  session.on((event) => {
    switch (event.type) {
      case 'connected':
        lastState = '';
        lastError = '';
        log.add('action', `connected to ${event.connection.settings.baseUrl}`);
        break;
      case 'disconnected':
        log.add('action', 'disconnected (client closed)');
        break;
      case 'change': {
        if (event.guids.length) log.add('change', `${event.guids.length} changed: ${few(event.guids)}`);
        else if (event.queue) log.add('change', 'the queue changed (pending / refused changes)');
        if (event.episodes.length) {
          const names = event.episodes.map((e) => e.episode.split('/').pop() ?? e.episode);
          log.add('change', `${event.episodes.length} episode${event.episodes.length === 1 ? '' : 's'} changed: ${few(names)}`);
        }
        break;
      }
      case 'status': {
        const s = event.status;
        // One line per change of state. Pulling/pushing come and go with every run (the pill and the
        // status panel show them live; sync reports go to the log), so they alone do not make a line.
        const busy = s.phase === 'pulling' || s.phase === 'pushing';
        const state = `${busy ? 'busy' : s.phase}|${s.online}|${s.leader}|${s.pending}|${s.failed}`;
        if (state !== lastState) {
          lastState = state;
          log.add('status', `${s.phase} · ${s.online ? 'online' : 'offline'} · ${s.leader ? 'leader' : 'follower'} · pending ${s.pending} · failed ${s.failed}`);
        }
        if (s.backgroundSync && s.backgroundSync !== lastBackground) log.add('status', `background sync: ${s.backgroundSync}`);
        lastBackground = s.backgroundSync;
        const error = s.lastError ? errorText(s.lastError) : '';
        if (error && error !== lastError) log.add('error', error);
        lastError = error;
        break;
      }
    }
  });
}
