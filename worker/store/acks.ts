// What the server answered to queued changes: the base takes the server's word, and a change leaves the
// queue only if it is still the version that was sent (an edit made during the request stays queued).
import type { Handout, ServerBase, StoredChange, StoredSubscription } from '../../src/schema.ts';
import type { ErrorInfo } from '../../src/types.ts';
import { isReady, type Hold } from '../hold.ts';
import { formatTimestamp, parseTimestamp } from '../time.ts';
import type { AddedEntry, SendItem, UpdateResult } from '../transport.ts';
import { META, type StoreCore } from './core.ts';
import { harmless, mayGo } from './delivery.ts';
import type { Reads } from './reads.ts';
import type { Workset } from './workset.ts';

/** Edit fields of a stored change (found by id; `undefined` removes a field) and re-derive its row. */
export function patchChange({ edit }: StoreCore, sent: StoredChange, fields: Partial<StoredChange>) {
  return edit(async (ws) => {
    const current = await ws.loadChange(sent.id!);
    if (!current) return;
    for (const [key, value] of Object.entries(fields)) {
      if (value === undefined) delete (current as unknown as Record<string, unknown>)[key];
      else (current as unknown as Record<string, unknown>)[key] = value;
    }
    ws.putChange(current);
  });
}

/** Whether a server word has the feed subscribed and not deleted. */
const live = (b: ServerBase) => b.isSubscribed && b.deleted === undefined;

const ms = (value: string | undefined): number => (value === undefined ? 0 : (parseTimestamp(value) ?? 0));

/** The server's word on an add's feed, newest first: every row of its guid or feed URL (a pull stores the server's row apart from a local add's). */
async function wordOn(ws: Workset, add: StoredChange, rows: StoredSubscription[]): Promise<ServerBase[]> {
  const heard = rows.filter((r) => r.guid === add.guid || r.base?.feedUrl === add.feedUrl).map((r) => r.guid);
  await ws.preload(heard);
  return heard.map((g) => ws.row(ws.resolve(g))?.base).filter((b) => b !== undefined).sort((a, b) => b.at - a.at);
}

/**
 * Note on an add leaving for the first time (or held in a page's copy) the server's word it leaves over (`sentAfter`,
 * `sentOver`), if a pull ever completed (one that listed nothing leaves no cursor: the store then knew no word).
 */
export function noteWord(add: StoredChange, bases: ServerBase[], cursor: number | undefined, pulls: number | undefined): void {
  if (!pulls) return;
  add.sentAfter = Math.max(cursor ?? 0, bases[0]?.at ?? 0);
  add.sentOver = bases[0] && live(bases[0]);
}

/** An add was answered: the server's entry becomes the base; the change goes if it was not edited meanwhile. */
async function ackAddIn(ws: Workset, sent: StoredChange, item: AddedEntry): Promise<void> {
  const current = await ws.loadChange(sent.id!);
  if (!current) return;
  await ws.preload([item.guid]);
  const row = ws.row(current.guid);
  const at = ms(item.subscriptionChanged);
  const base: ServerBase = {
    ...(row?.base ?? {}),
    guid: item.guid,
    feedUrl: item.feedUrl,
    isSubscribed: item.isSubscribed,
    at: Math.max(at, row?.base?.at ?? 0),
    dataAt: Math.max(at, row?.base?.dataAt ?? 0),
  };
  delete base.deleted;
  if (item.subscriptionChanged !== undefined) base.subscriptionChanged = item.subscriptionChanged;
  // Base first (this may re-key the row and its changes onto the server's guid), then drop what was sent.
  ws.setBase(current.guid, base);
  if (current.version === sent.version) ws.deleteChange(current);
}

/** An update was answered: what was sent is now the server's state (last write wins there). */
async function ackUpdateIn(ws: Workset, sent: StoredChange, result: UpdateResult): Promise<void> {
  const current = await ws.loadChange(sent.id!);
  if (!current) return;
  const newGuid = result.newGuid ?? sent.change?.guid;
  if (newGuid !== undefined) await ws.preload([newGuid]);
  const row = ws.row(current.guid);
  if (!row?.base) {
    if (current.version === sent.version) ws.deleteChange(current);
    return;
  }
  const change = sent.change ?? {};
  const base: ServerBase = { ...row.base };
  base.feedUrl = result.feedUrl ?? change.feedUrl ?? base.feedUrl;
  base.isSubscribed = result.isSubscribed ?? change.isSubscribed ?? base.isSubscribed;
  // A subscribe the server stamped after a pull's tombstone ends it (as an add's answer does).
  if (base.isSubscribed && ms(result.subscriptionChanged) >= ms(base.deleted)) delete base.deleted;
  if (newGuid !== undefined && newGuid !== base.guid) {
    ws.alias(base.guid, newGuid);
    base.guid = newGuid;
  }
  if (result.subscriptionChanged !== undefined) {
    base.subscriptionChanged = result.subscriptionChanged;
    base.dataAt = Math.max(base.dataAt, ms(result.subscriptionChanged));
  }
  if (result.guidChanged !== undefined) base.guidChanged = result.guidChanged;
  base.at = Math.max(base.at, ms(result.subscriptionChanged), ms(result.guidChanged));
  ws.setBase(current.guid, base);
  if (current.version === sent.version) ws.deleteChange(current);
}

/** The deletion is done (or the server had nothing to delete): the row becomes a tombstone, the edits held behind it go. */
async function ackDeletedIn(ws: Workset, sent: StoredChange, now: number): Promise<void> {
  const current = await ws.loadChange(sent.id!);
  if (!current) return;
  const row = ws.row(current.guid);
  const held = ws.changes(current.guid).filter((c) => c.held && c.state === 'queued');
  // No server timestamp is known yet: keep `at` so the next pull's entry (with the server's time) wins.
  if (row?.base) ws.setBase(current.guid, { ...row.base, deleted: row.base.deleted ?? formatTimestamp(now) });
  ws.deleteChange(current);
  // `guid` of each is kept in step with the row's key by the workset, however dropping one re-keys it.
  for (const change of held) ws.deleteChange(change);
}

/** A change to try again later: its wait, and why (a deletion job still running has no error). */
export interface Wait {
  sent: StoredChange;
  hold: Hold;
  lastError?: ErrorInfo;
}

/** A change the server took, and what it answered. */
export type Ack = { sent: StoredChange } & ({ type: 'added'; entry: AddedEntry } | { type: 'updated'; result: UpdateResult } | { type: 'deleted'; now: number });

/** Settle one acknowledgement inside a unit of work. */
function ackIn(ws: Workset, ack: Ack): Promise<void> {
  if (ack.type === 'added') return ackAddIn(ws, ack.sent, ack.entry);
  if (ack.type === 'updated') return ackUpdateIn(ws, ack.sent, ack.result);
  return ackDeletedIn(ws, ack.sent, ack.now);
}

/** The store's acknowledgements. */
export function createAcks(core: StoreCore, reads: Reads) {
  const { db, edit } = core;
  return {
    /** A deletion was accepted: keep the deletion id and poll it once `hold` is over. */
    async deletionAccepted(sent: StoredChange, deletionId: number, hold: Hold) {
      return patchChange(core, sent, { state: 'deleting', deletionId, attempts: 0, serverHold: undefined, ...hold, lastError: undefined });
    },

    /** The deletion is done (or the server had nothing to delete): the row becomes a tombstone, the edits held behind it go. */
    ackDeleted: (sent: StoredChange, now: number) => edit((ws) => ackDeletedIn(ws, sent, now)),

    /** The acknowledgements of one upload, in order, in one transaction (one upload may carry every change queued). */
    acks: (done: readonly Ack[]) =>
      edit(async (ws) => {
        for (const ack of done) await ackIn(ws, ack);
      }),

    /**
     * Move a change to `failed()` (the view falls back to the server's state). A refused add that the app has
     * removed since goes instead: the removal is what the listener wants now, and retrying the add would revive
     * the feed without the edits the removal dropped. When the server never had the feed, the removal and what
     * waits behind it go too: there is nothing to delete.
     */
    async fail(sent: StoredChange, reason: ErrorInfo) {
      return edit(async (ws) => {
        const current = await ws.loadChange(sent.id!);
        if (!current) return;
        const changes = ws.changes(current.guid);
        if (current.kind === 'add' && changes.some((c) => c.kind === 'remove' && c.state !== 'failed')) {
          for (const change of ws.row(current.guid)?.base ? [current] : [...changes]) ws.deleteChange(change);
          return;
        }
        current.state = 'failed';
        current.lastError = reason;
        ws.putChange(current);
      });
    },

    /**
     * Keep changes queued and try each again once its `hold` is over (a hold without `serverHold` clears an old
     * one), in one transaction (one upload may carry every change queued).
     */
    async laterAll(waits: readonly Wait[]) {
      return edit(async (ws) => {
        await ws.preload(waits.map((w) => w.sent.guid));
        for (const { sent, hold, lastError } of waits) {
          // Found among its row's changes, read in bulk above (by id when a re-key moved it elsewhere).
          const current = ws.changes(ws.resolve(sent.guid)).find((c) => c.id === sent.id) ?? (await ws.loadChange(sent.id!));
          if (!current) continue;
          delete current.serverHold;
          Object.assign(current, { attempts: sent.attempts + 1, ...hold }, lastError && { lastError });
          ws.putChange(current);
        }
      });
    },

    /** Edit fields of a stored change and re-derive its row. */
    patchChange: (sent: StoredChange, fields: Partial<StoredChange>) => patchChange(core, sent, fields),

    /**
     * Hand out what goes next, in one transaction: the queue is read, `pick` (the plan) chooses from it, and each
     * chosen change's delivery state is written before the request leaves (a crash, another tab or the service
     * worker must know it may have arrived). Resolves with what goes, addressed as the transport sends it. One
     * that may have arrived and is not harmless to repeat goes again only once a pull completed since
     * (`mayGo`): it is left out until then.
     *
     * An add handed out before whose feed the server has given a different word since `sentAfter` is not sent
     * again: the server's word settles it. If the add reached the server, what came after (another device
     * unsubscribing or deleting the feed) must stand, and a POST sent again would undo it (it re-subscribes). If
     * it did not, another device changed the same feed meanwhile without knowing of ours: a conflict of two edits
     * neither saw, where the server's word is as good an outcome as ours, and better than undoing an edit made
     * after seeing ours. A word the store knew when the add left, or one that restates it (an overlap, gPodder
     * stamping what it lists with its answer's time), says nothing of the add: it goes again.
     */
    async handOut(pick: (pending: StoredChange[]) => StoredChange[], by: Handout['by'], now: number): Promise<{ result: SendItem[]; changed: string[] }> {
      return edit(
        async (ws) => {
          const [cursor, pulls = 0] = (await db.meta.bulkGet([META.cursor, META.pulls])).map((r) => r?.value as number | undefined);
          let rows: StoredSubscription[] | undefined;
          const going: StoredChange[] = [];
          for (const c of pick(await reads.pendingChanges())) {
            // Handed out already and harmless to repeat: it goes as it is.
            const current = c.sent && harmless(c) ? c : await ws.loadChange(c.id!);
            if (!current || !mayGo(current, pulls)) continue;
            if (current.kind === 'add') {
              // The server's word on its feed, newest first: every row of its guid or feed URL (a pull stores the
              // server's row apart from a local add's).
              const bases = await wordOn(ws, current, (rows ??= await db.subscriptions.toArray()));
              const word = bases.find((b) => b.at > current.sentAfter! && live(b) !== current.sentOver);
              if (word) {
                // Onto the server's row, which keeps its state.
                ws.setBase(current.guid, word);
                ws.deleteChange(current);
                continue;
              }
              if (!current.sent && current.sentAfter === undefined) noteWord(current, bases, cursor, pulls);
            }
            if (current !== c) {
              current.sent = { by, at: now, pull: pulls };
              ws.putChange(current);
            }
            going.push(current);
          }
          return reads.sendItems(going);
        },
        undefined,
        true,
      );
    },

    /**
     * The first run of an engine that leads (or of the service worker): the pages that held a copy before it
     * may have gone and sent it, so every copied change never handed out counts as handed out by a copy now.
     * Returns whether the run pulls before it pushes: a change waits for the server's word (one not harmless to
     * repeat that may have arrived, see `mayGo`), or a hold another context left runs (the pull probes the
     * server: answered, the push after it goes at once instead of waiting the hold out).
     */
    async takeOver(now: number, steady: number): Promise<boolean> {
      const { result } = await edit(
        async (ws) => {
          const pulls = ((await db.meta.get(META.pulls))?.value as number | undefined) ?? 0;
          let first = false;
          for (let change of await db.outbox.where('state').equals('queued').toArray()) {
            if (change.copied && !change.sent) {
              change = (await ws.loadChange(change.id!))!;
              change.sent = { by: 'copy', at: now, pull: pulls };
              ws.putChange(change);
            }
            first ||= !mayGo(change, pulls) || !isReady(change, steady, false);
          }
          return first;
        },
        undefined,
        true,
      );
      return result;
    },
  };
}
