// The status panel: phase, connectivity, leadership, queue counts, cursor, last sync, pull progress.
import type { SyncStatus } from '../src/index.ts';
import { byId } from './dom.ts';
import { ago, clock, errorText } from './format.ts';
import type { Session } from './session.ts';

/** Render the engine's status into the panel and the header pill. */
export function createStatusPanel(session: Session): void {
  const pill = byId('phase-pill');
  const field = (id: string) => byId(`st-${id}`);
  const progressBox = byId('pull-progress');
  const bar = byId<HTMLProgressElement>('pull-bar');
  const barText = byId('pull-text');
  let current: SyncStatus | undefined;

  const setPill = (phase: string): void => {
    pill.textContent = phase;
    pill.dataset.phase = phase;
  };

  const lastSync = (): string => (current?.lastSuccess ? `${clock(current.lastSuccess)} (${ago(current.lastSuccess)})` : 'never');

  /** Whether the server answers: the device offline and the server unreachable (also behind a proxy that answers 502) told apart. */
  const online = (s: SyncStatus): string => (s.online ? 'yes' : s.network === 'offline' ? 'no (this device is offline)' : s.phase === 'unavailable' ? 'no (the sync worker did not load)' : 'no (the server does not answer)');

  /** Leadership is not known while the engine starts, and there is none without a worker. */
  const leader = (s: SyncStatus): string =>
    s.phase === 'starting' ? 'not known yet (starting)' : s.phase === 'unavailable' ? '—' : s.leader ? 'yes (this tab syncs)' : 'no (another tab syncs)';

  function render(s: SyncStatus | undefined): void {
    current = s;
    setPill(s ? s.phase : 'disconnected');
    field('phase').textContent = s?.phase ?? '—';
    field('online').textContent = s ? online(s) : '—';
    field('leader').textContent = s ? leader(s) : '—';
    field('pending').textContent = s ? String(s.pending) : '—';
    field('failed').textContent = s ? String(s.failed) : '—';
    // Listening-state changes wait apart from subscription changes (`pending()` lists only the latter).
    field('pending-episodes').textContent = s ? String(s.pendingEpisodes) : '—';
    field('cursor').textContent = s?.cursor ?? '—';
    field('last').textContent = s ? lastSync() : '—';
    field('error').textContent = s?.lastError ? errorText(s.lastError) : 'none';
    field('error').classList.toggle('is-error', Boolean(s?.lastError));
    const p = s?.progress;
    progressBox.hidden = !p;
    if (p) {
      if (p.total) {
        bar.max = p.total;
        bar.value = Math.min(p.entries, p.total);
      } else bar.removeAttribute('value'); // indeterminate
      barText.textContent = `page ${p.pages} · ${p.entries}${p.total ? ` of ${p.total}` : ''} entries`;
    }
  }

  render(undefined);
  setInterval(() => {
    if (current) field('last').textContent = lastSync();
  }, 5000);
  session.on((event) => {
    if (event.type === 'status') render(event.status);
    if (event.type === 'disconnected') render(undefined);
    if (event.type === 'connected') setPill('connecting');
  });
}
