// Logs what the engine reports: change events, status transitions and each new error with its code.
import { clock, errorText } from './format.ts';
import type { Log } from './log.ts';
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

/** Log the session's engine events. */
export function logEngineEvents(session: Session, log: Log): void {
  logLastChance(log);
  let lastState = '';
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
        const error = s.lastError ? errorText(s.lastError) : '';
        if (error && error !== lastError) log.add('error', error);
        lastError = error;
        break;
      }
    }
  });
}
