// One subscription row: the subscribed switch, feed URL, guid, badges, and Episodes/Edit/Delete; or its edit form.
import type { Subscription, SubscriptionChange } from '../src/index.ts';
import { h } from './dom.ts';

/** What a row can ask for. */
export interface RowActions {
  toggle(sub: Subscription, subscribed: boolean): Promise<void>;
  edit(guid: string | undefined): void;
  save(sub: Subscription, change: SubscriptionChange): Promise<void>;
  remove(sub: Subscription): Promise<void>;
  /** Show its episodes (the episodes panel). */
  episodes(sub: Subscription): void;
}

/** What a row shows; equal signatures need no re-render. */
export function rowSignature(sub: Subscription, failed: boolean, editing: boolean): string {
  return `${sub.guid}|${sub.feedUrl}|${sub.isSubscribed}|${sub.pending}|${sub.deleted ?? ''}|${failed}|${editing}`;
}

function badge(kind: string, text: string, title: string): HTMLElement {
  return h('span', { class: `badge badge-${kind}`, title }, text);
}

/** Fill `li` with the row for `sub`. */
export function renderRow(li: HTMLLIElement, sub: Subscription, failed: boolean, editing: boolean, actions: RowActions): void {
  li.className = 'sub';
  li.dataset.guid = sub.guid;
  li.dataset.subscribed = String(sub.isSubscribed);
  li.dataset.pending = String(sub.pending);
  li.classList.toggle('is-unsubscribed', !sub.isSubscribed);
  li.classList.toggle('is-deleted', Boolean(sub.deleted));
  li.replaceChildren(...(editing ? editForm(sub, actions) : view(sub, failed, actions)));
}

function view(sub: Subscription, failed: boolean, actions: RowActions): Node[] {
  const deleted = Boolean(sub.deleted);
  const toggle = h('input', {
    type: 'checkbox',
    role: 'switch',
    class: 'switch-input',
    'aria-label': `Subscribed: ${sub.feedUrl}`,
    checked: sub.isSubscribed,
    disabled: deleted,
  });
  toggle.addEventListener('change', () => {
    toggle.disabled = true;
    void actions.toggle(sub, toggle.checked).finally(() => (toggle.disabled = false));
  });
  const badges = [
    sub.pending && badge('pending', 'pending', 'Local changes wait for the server'),
    failed && badge('failed', 'failed', 'The server refused a change: see Local changes'),
    deleted && badge('deleted', 'deleted', `Deleted ${sub.deleted}`),
    !sub.isSubscribed && !deleted && badge('off', 'unsubscribed', 'Kept, but not subscribed'),
  ].filter((b): b is HTMLElement => Boolean(b));
  return [
    h('label', { class: 'switch', title: sub.isSubscribed ? 'Subscribed' : 'Not subscribed' }, toggle),
    h(
      'div',
      { class: 'sub-main' },
      h('div', { class: 'sub-feed', title: sub.feedUrl }, sub.feedUrl),
      h('div', { class: 'sub-meta' }, h('code', { class: 'sub-guid', title: 'guid' }, sub.guid), ...badges),
    ),
    h(
      'div',
      { class: 'sub-actions' },
      h('button', { type: 'button', class: 'btn btn-small', 'aria-label': `Episodes of ${sub.feedUrl}`, disabled: deleted, onclick: () => actions.episodes(sub) }, 'Episodes'),
      h('button', { type: 'button', class: 'btn btn-small', 'aria-label': `Edit ${sub.feedUrl}`, disabled: deleted, onclick: () => actions.edit(sub.guid) }, 'Edit'),
      h(
        'button',
        {
          type: 'button',
          class: 'btn btn-small btn-danger',
          'aria-label': `Delete ${sub.feedUrl}`,
          disabled: deleted,
          onclick: (e: Event) => {
            (e.currentTarget as HTMLButtonElement).disabled = true;
            void actions.remove(sub);
          },
        },
        'Delete',
      ),
    ),
  ];
}

let formIds = 0;

function editForm(sub: Subscription, actions: RowActions): Node[] {
  const id = `edit-${++formIds}`;
  const feed = h('input', { id: `${id}-feed`, type: 'url', required: true, value: sub.feedUrl, spellcheck: 'false' });
  const guid = h('input', { id: `${id}-guid`, type: 'text', required: true, value: sub.guid, spellcheck: 'false' });
  const save = h('button', { type: 'submit', class: 'btn btn-primary btn-small' }, 'Save');
  const form = h(
    'form',
    { class: 'sub-edit', 'aria-label': `Edit ${sub.feedUrl}` },
    h('div', { class: 'field' }, h('label', { for: feed.id }, 'Feed URL'), feed),
    h('div', { class: 'field' }, h('label', { for: guid.id }, 'Guid'), guid),
    h('div', { class: 'sub-edit-actions' }, save, h('button', { type: 'button', class: 'btn btn-small', onclick: () => actions.edit(undefined) }, 'Cancel')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const change: SubscriptionChange = {};
    if (feed.value.trim() !== sub.feedUrl) change.feedUrl = feed.value.trim();
    if (guid.value.trim() !== sub.guid) change.guid = guid.value.trim();
    if (!Object.keys(change).length) return actions.edit(undefined);
    save.disabled = true;
    void actions.save(sub, change).finally(() => (save.disabled = false));
  });
  queueMicrotask(() => feed.focus());
  return [form];
}
