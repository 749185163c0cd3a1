// "Import OPML" / "Export OPML": a library from another player comes in with one importOpml() (one transaction,
// one change event, adds sharing requests on the wire), and goes out as a file any player reads.
import { byId } from './dom.ts';
import type { Log } from './log.ts';
import type { Session } from './session.ts';

export function createOpmlButtons(session: Session, log: Log): void {
  const file = byId<HTMLInputElement>('opml-file');
  const pick = byId<HTMLButtonElement>('opml-import');
  const save = byId<HTMLButtonElement>('opml-export');

  pick.addEventListener('click', () => file.click());
  file.addEventListener('change', async () => {
    const client = session.connection?.client;
    const chosen = file.files?.[0];
    file.value = '';
    if (!client || !chosen) return;
    try {
      const { added, alreadyThere, skipped } = await client.importOpml(await chosen.text());
      log.add('action', `imported ${chosen.name}: ${added.length} added (queued), ${alreadyThere.length} already there, ${skipped.length} skipped`);
      for (const skip of skipped) log.add('action', `  skipped ${skip.url ?? '(an entry without a feed URL)'}: ${skip.reason}`);
    } catch (error) {
      log.error(`importing ${chosen.name}`, error);
    }
  });

  save.addEventListener('click', async () => {
    const client = session.connection?.client;
    if (!client) return;
    try {
      const text = await client.exportOpml({ title: 'opa-sync demo subscriptions' });
      const link = document.createElement('a');
      link.href = URL.createObjectURL(new Blob([text], { type: 'text/x-opml' }));
      link.download = 'subscriptions.opml';
      link.click();
      URL.revokeObjectURL(link.href);
      log.add('action', `exported ${text.split('<outline ').length - 1} subscribed feeds as subscriptions.opml`);
    } catch (error) {
      log.error('exporting OPML', error);
    }
  });

  session.on((event) => {
    if (event.type === 'connected' || event.type === 'disconnected') pick.disabled = save.disabled = event.type === 'disconnected';
  });
}
