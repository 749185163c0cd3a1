// "Subscribe to a feed": add() shows the subscription locally at once and queues the POST.
import { byId } from './dom.ts';
import type { ListView } from './list.ts';
import type { Log } from './log.ts';
import type { Session } from './session.ts';

export function createAddForm(session: Session, log: Log, list: ListView): void {
  const form = byId<HTMLFormElement>('add-form');
  const url = byId<HTMLInputElement>('add-url');
  const guid = byId<HTMLInputElement>('add-guid');
  const button = form.querySelector('button[type="submit"]') as HTMLButtonElement;

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const client = session.connection?.client;
    if (!client) return;
    button.disabled = true;
    try {
      const feedUrl = url.value.trim();
      const sub = await client.add(feedUrl, guid.value.trim() ? { guid: guid.value.trim() } : undefined);
      log.add('action', `subscribed to ${sub.feedUrl} as ${sub.guid} (queued)`);
      form.reset();
      list.reveal(sub.guid);
    } catch (error) {
      log.error('subscribing', error);
    } finally {
      button.disabled = false;
    }
  });

  session.on((event) => {
    if (event.type === 'connected' || event.type === 'disconnected') {
      for (const el of form.elements) (el as HTMLInputElement).disabled = event.type === 'disconnected';
    }
  });
}
