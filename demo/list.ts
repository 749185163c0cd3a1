// The subscriptions list: the local view (server state ⊕ pending changes), searched, filtered and capped
// so thousands of rows stay fast (only `cap` rows are in the DOM; "Show more" raises it).
import type { Subscription, SubscriptionChange } from '../src/index.ts';
import { byId, h } from './dom.ts';
import type { Log } from './log.ts';
import { coalesce } from './refresh.ts';
import { renderRow, rowSignature, type RowActions } from './row.ts';
import { episodeOnly, type Session } from './session.ts';

/** Rows rendered at first and added by each "Show more". */
export const ROWS_PER_STEP = 100;
const SEARCH_DEBOUNCE_MS = 150;

interface Item {
  sub: Subscription;
  /** Lower-cased feed URL and guid, for search. */
  text: string;
}

/** The list view; `reveal` scrolls to a subscription once it is loaded (after an add). */
export interface ListView {
  reveal(guid: string): void;
}

/** The list; `openEpisodes` shows a subscription's episodes (the episodes panel). */
export function createList(session: Session, log: Log, openEpisodes: (sub: Subscription) => void): ListView {
  const list = byId<HTMLUListElement>('sub-list');
  const count = byId('sub-count');
  const summary = byId('list-summary');
  const search = byId<HTMLInputElement>('search');
  const showDeleted = byId<HTMLInputElement>('show-deleted');
  const more = byId<HTMLButtonElement>('show-more');

  let items: Item[] = [];
  let failed = new Set<string>();
  let query = '';
  let cap = ROWS_PER_STEP;
  let editing: string | undefined;
  let revealing: string | undefined;
  const rows = new Map<string, { li: HTMLLIElement; signature: string }>();

  const client = () => session.connection?.client;

  async function load(): Promise<void> {
    const c = client();
    if (!c) return;
    const [subs, refused] = await Promise.all([c.subscriptions({ includeDeleted: showDeleted.checked }), c.failed()]);
    if (client() !== c) return;
    subs.sort((a, b) => (a.feedUrl < b.feedUrl ? -1 : a.feedUrl > b.feedUrl ? 1 : a.guid < b.guid ? -1 : 1));
    items = subs.map((sub) => ({ sub, text: `${sub.feedUrl}\n${sub.guid}`.toLowerCase() }));
    failed = new Set(refused.map((f) => f.guid));
    if (editing && !items.some((i) => i.sub.guid === editing)) editing = undefined;
    render();
  }
  const reload = coalesce(load);

  const actions: RowActions = {
    episodes: openEpisodes,
    async toggle(sub, subscribed) {
      try {
        await client()?.update(sub.guid, { isSubscribed: subscribed });
        log.add('action', `${subscribed ? 'subscribed to' : 'unsubscribed from'} ${sub.feedUrl} (queued)`);
      } catch (error) {
        log.error(`toggling ${sub.guid}`, error);
      }
      reload();
    },
    edit(guid) {
      editing = guid;
      render();
    },
    async save(sub: Subscription, change: SubscriptionChange) {
      try {
        const after = await client()?.update(sub.guid, change);
        const what = [change.feedUrl && `feed URL → ${change.feedUrl}`, change.guid && `guid → ${change.guid}`].filter(Boolean).join(', ');
        log.add('action', `changed ${sub.guid}: ${what} (queued)`);
        editing = undefined;
        if (after) revealing = after.guid;
      } catch (error) {
        log.error(`changing ${sub.guid}`, error);
      }
      reload();
    },
    async remove(sub) {
      try {
        await client()?.remove(sub.guid);
        log.add('action', `delete requested for ${sub.feedUrl} (${sub.guid}); its deletion job shows under Local changes`);
      } catch (error) {
        log.error(`deleting ${sub.guid}`, error);
      }
      reload();
    },
  };

  function render(): void {
    const c = client();
    const matches = query ? items.filter((i) => i.text.includes(query)) : items;
    if (revealing) {
      const at = matches.findIndex((i) => i.sub.guid === revealing);
      if (at >= cap) cap = Math.ceil((at + 1) / ROWS_PER_STEP) * ROWS_PER_STEP;
    }
    const shown = matches.slice(0, cap);
    const wanted: HTMLLIElement[] = [];
    const keep = new Set<string>();
    for (const { sub } of shown) {
      const signature = rowSignature(sub, failed.has(sub.guid), editing === sub.guid);
      let row = rows.get(sub.guid);
      if (!row) {
        row = { li: h('li'), signature: '' };
        rows.set(sub.guid, row);
      }
      if (row.signature !== signature) {
        renderRow(row.li, sub, failed.has(sub.guid), editing === sub.guid, actions);
        row.signature = signature;
      }
      keep.add(sub.guid);
      wanted.push(row.li);
    }
    for (const guid of rows.keys()) if (!keep.has(guid)) rows.delete(guid);
    const current = list.children;
    const same = current.length === wanted.length && wanted.every((li, i) => current[i] === li);
    if (!same) list.replaceChildren(...wanted);

    const total = items.length;
    count.textContent = c ? String(total) : '—';
    count.dataset.count = c ? String(total) : '';
    if (!c) summary.textContent = 'Not connected.';
    else if (query) summary.textContent = `${matches.length} of ${total} match “${search.value.trim()}”${matches.length > shown.length ? `, showing ${shown.length}` : ''}.`;
    else if (total === 0) summary.textContent = 'No subscriptions yet. Subscribe to a feed above, or press Sync now.';
    else summary.textContent = `Showing ${shown.length} of ${total}, sorted by feed URL.`;
    summary.dataset.matches = String(matches.length);
    more.hidden = matches.length <= shown.length;
    more.textContent = `Show ${Math.min(ROWS_PER_STEP, matches.length - shown.length)} more`;

    if (revealing) {
      const row = rows.get(revealing);
      if (row && row.li.isConnected) {
        revealing = undefined;
        row.li.scrollIntoView({ block: 'nearest' });
        row.li.classList.remove('flash');
        void row.li.offsetWidth; // restart the animation
        row.li.classList.add('flash');
      }
    }
  }

  let searchTimer: ReturnType<typeof setTimeout> | undefined;
  search.addEventListener('input', () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => {
      query = search.value.trim().toLowerCase();
      cap = ROWS_PER_STEP;
      render();
    }, SEARCH_DEBOUNCE_MS);
  });
  showDeleted.addEventListener('change', () => {
    cap = ROWS_PER_STEP;
    reload();
  });
  more.addEventListener('click', () => {
    cap += ROWS_PER_STEP;
    render();
  });

  session.on((event) => {
    // Local edits, acknowledgements, refusals and pulls all come as `change` events; one that names only
    // episodes (a player's progress, every second) leaves the subscriptions as they were.
    if (event.type === 'connected' || (event.type === 'change' && !episodeOnly(event))) reload();
    if (event.type === 'disconnected') {
      items = [];
      failed = new Set();
      editing = undefined;
      rows.clear();
      render();
    }
  });
  render();

  return {
    reveal(guid) {
      revealing = guid;
      reload();
    },
  };
}
