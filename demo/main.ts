// The demo page: wires the views to one session (one SyncClient, in its own Web Worker).
import { createAddForm } from './add.ts';
import { createOpmlButtons } from './opml.ts';
import { createConnectPanel } from './connect.ts';
import { byId } from './dom.ts';
import { logEngineEvents } from './events.ts';
import { createEpisodesPanel } from './episodes.ts';
import { createList } from './list.ts';
import { createLog } from './log.ts';
import { createOutbox } from './outbox.ts';
import { createPlayer } from './player.ts';
import { createSession } from './session.ts';
import { createStatusPanel } from './status.ts';
import { syncNow } from './sync.ts';
import { createTroublePanel } from './trouble.ts';

const session = createSession();
const log = createLog(byId<HTMLOListElement>('log-list'), byId<HTMLButtonElement>('log-clear'));
logEngineEvents(session, log);
createStatusPanel(session);
const episodes = createEpisodesPanel(session, log, createPlayer(session, log));
const list = createList(session, log, episodes.open);
createAddForm(session, log, list);
createOpmlButtons(session, log);
createOutbox(session, log);
createTroublePanel(session, log);

const syncButton = byId<HTMLButtonElement>('sync-now');
syncButton.addEventListener('click', async () => {
  syncButton.disabled = true;
  await syncNow(session, log, 'sync now');
  syncButton.disabled = !session.connection;
});
session.on((event) => {
  if (event.type === 'connected' || event.type === 'disconnected') syncButton.disabled = event.type === 'disconnected';
});

await createConnectPanel(session, log);
document.body.dataset.ready = 'true';
