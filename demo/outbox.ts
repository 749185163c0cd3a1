// "Local changes": the queue (`pending()`, with a remove's deletion job), refusals (`failed()`, with
// Retry / Discard), and a lookup of any deletion job (`deletion(id)`).
import type { FailedChange, PendingChange } from '../src/index.ts';
import { byId, h } from './dom.ts';
import { changeText, clock, errorText } from './format.ts';
import type { Log } from './log.ts';
import { coalesce } from './refresh.ts';
import { episodeOnly, type Session } from './session.ts';

export function createOutbox(session: Session, log: Log): void {
  const pendingList = byId<HTMLUListElement>('pending-list');
  const pendingCount = byId('pending-count');
  const failedList = byId<HTMLUListElement>('failed-list');
  const failedCount = byId('failed-count');
  const lookup = byId<HTMLFormElement>('deletion-form');
  const lookupId = byId<HTMLInputElement>('deletion-id');
  const lookupResult = byId('deletion-result');

  /** Deletion jobs already announced in the log, and the last answer for each. */
  const jobs = new Map<number, string>();
  const client = () => session.connection?.client;

  async function checkDeletion(id: number): Promise<string> {
    const c = client();
    if (!c) return 'not connected';
    try {
      const s = await c.deletion(id);
      const text = `${s.status}${s.message ? ` (${s.message})` : ''}`;
      log.add('sync', `deletion #${id}: ${text}`);
      jobs.set(id, text);
      return text;
    } catch (error) {
      log.error(`checking deletion #${id}`, error);
      return 'error: see the log';
    }
  }

  function pendingItem(p: PendingChange): HTMLLIElement {
    const li = h(
      'li',
      { class: 'change', 'data-kind': p.kind, 'data-guid': p.guid },
      h('div', { class: 'change-head' }, h('span', { class: `kind kind-${p.kind}` }, p.kind), h('span', { class: 'change-text' }, changeText(p))),
      h('div', { class: 'change-meta' }, h('code', { title: 'guid' }, p.guid), ` · queued ${clock(p.createdAt)} · attempts ${p.attempts}`),
    );
    if (p.lastError) li.append(h('div', { class: 'change-error' }, `retrying after ${errorText(p.lastError)}`));
    if (p.deletionId !== undefined) {
      const id = p.deletionId;
      const result = h('span', { class: 'deletion-result', 'data-deletion-id': id }, jobs.get(id) ?? 'not checked yet');
      const check = h('button', { type: 'button', class: 'btn btn-small', 'aria-label': `Check deletion ${id}` }, 'Check status');
      check.addEventListener('click', async () => {
        check.disabled = true;
        result.textContent = await checkDeletion(id);
        check.disabled = false;
        reload();
      });
      li.append(h('div', { class: 'change-deletion' }, h('span', {}, `deletion #${id}: `), result, check));
    }
    return li;
  }

  function failedItem(f: FailedChange): HTMLLIElement {
    const act = (what: 'retry' | 'discard') => async () => {
      const c = client();
      if (!c) return;
      try {
        await c[what](f.id);
        log.add('action', `${what === 'retry' ? 're-queued' : 'discarded'} the refused ${f.kind} of ${f.guid}`);
      } catch (error) {
        log.error(`${what} #${f.id}`, error);
      }
      reload();
    };
    return h(
      'li',
      { class: 'change change-failed', 'data-kind': f.kind, 'data-guid': f.guid },
      h('div', { class: 'change-head' }, h('span', { class: `kind kind-${f.kind}` }, f.kind), h('span', { class: 'change-text' }, changeText(f))),
      h('div', { class: 'change-meta' }, h('code', { title: 'guid' }, f.guid)),
      h('div', { class: 'change-error' }, errorText(f.reason)),
      h(
        'div',
        { class: 'change-buttons' },
        h('button', { type: 'button', class: 'btn btn-small btn-primary', onclick: act('retry') }, 'Retry'),
        h('button', { type: 'button', class: 'btn btn-small', onclick: act('discard') }, 'Discard'),
      ),
    );
  }

  function render(pending: PendingChange[], refused: FailedChange[]): void {
    for (const p of pending) {
      if (p.deletionId !== undefined && !jobs.has(p.deletionId)) {
        jobs.set(p.deletionId, 'PENDING (accepted)');
        log.add('sync', `server accepted the delete of ${p.guid}: deletion job #${p.deletionId}, polled until it settles`);
        lookupId.value = String(p.deletionId);
      }
    }
    pendingCount.textContent = String(pending.length);
    failedCount.textContent = String(refused.length);
    pendingList.replaceChildren(...(pending.length ? pending.map(pendingItem) : [h('li', { class: 'empty' }, 'Nothing waiting for the server.')]));
    failedList.replaceChildren(...(refused.length ? refused.map(failedItem) : [h('li', { class: 'empty' }, 'No refused changes.')]));
  }

  async function load(): Promise<void> {
    const c = client();
    if (!c) return render([], []);
    const [pending, refused] = await Promise.all([c.pending(), c.failed()]);
    if (client() === c) render(pending, refused);
  }
  const reload = coalesce(load);

  lookup.addEventListener('submit', async (event) => {
    event.preventDefault();
    const id = Number(lookupId.value);
    if (!Number.isInteger(id) || id < 0) {
      lookupResult.textContent = 'A deletion id is a whole number.';
      return;
    }
    lookupResult.textContent = 'asking the server…';
    lookupResult.textContent = `#${id}: ${await checkDeletion(id)}`;
  });

  session.on((event) => {
    if (event.type === 'disconnected') render([], []);
    // The queue lists subscription changes only: a player's progress does not touch it.
    else if (event.type !== 'change' || !episodeOnly(event)) reload();
  });
  render([], []);
}
