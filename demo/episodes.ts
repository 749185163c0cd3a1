// The episodes panel: one subscription's episodes with their listening state (`episodes({ podcast })`),
// play/seek (`setProgress`), mark played (`markPlayed`), a pending marker, and "another device". It re-reads
// on `change` events that name this feed's episodes (pulls, local edits, other tabs).
import { isSyncError, type EpisodeRef, type EpisodeState, type Subscription } from '../src/index.ts';
import { findAdmin, type Admin } from './admin.ts';
import { feedEpisodes } from './catalog.ts';
import { byId } from './dom.ts';
import { createEpisodeRow, type EpisodeActions, type EpisodeRow, type EpisodeView } from './episode-row.ts';
import { playTime } from './format.ts';
import type { Log } from './log.ts';
import { playElsewhere } from './other-device.ts';
import { sameEpisode, type Player } from './player.ts';
import { coalesce } from './refresh.ts';
import type { Session } from './session.ts';

/** The panel; `open` shows a subscription's episodes. */
export interface EpisodesPanel {
  open(sub: Subscription): void;
}

const NOTE_CATALOG =
  'Episodes from the local reference server (GET /__admin/feed/…, made up per feed URL). A real player reads them from the feed’s RSS itself; opa-sync syncs where you are in each one.';
const NOTE_NO_CATALOG =
  'A real player reads a feed’s episodes from its RSS; this demo gets them only from the local reference server, so here it lists the episodes this browser holds a listening state for.';
const NOTE_UNSUPPORTED =
  'Listening state is not available for this protocol: the Open Podcast API has no published episode interface yet, so setProgress, markPlayed, episode and episodes reject with “unsupported”. Connect with gPodder or Nextcloud to try it.';

const withoutQuery = (url: string): string => url.split('?')[0]!;
const fileName = (url: string): string => withoutQuery(url).split('/').pop() || url;

/** The stored state of `ref`: matched by guid when both have one, else by enclosure URL without its query (as the engine does). */
function stateOf(ref: EpisodeRef, states: EpisodeState[]): EpisodeState | undefined {
  return states.find((s) => (s.guid && ref.guid ? s.guid === ref.guid : withoutQuery(s.episode) === withoutQuery(ref.episode)));
}

export function createEpisodesPanel(session: Session, log: Log, player: Player): EpisodesPanel {
  const panel = byId('episodes');
  const feedLine = byId('episodes-feed');
  const note = byId('episodes-note');
  const summary = byId('episodes-summary');
  const list = byId<HTMLUListElement>('episode-list');

  /** The reference server's controls, once found after connecting (undefined for a real server). */
  let admin: Promise<Admin | undefined> = Promise.resolve(undefined);
  let hasAdmin = false;
  let podcast: string | undefined;
  let catalog: EpisodeView[] = [];
  let states: EpisodeState[] = [];
  const rows = new Map<string, EpisodeRow>();
  const client = () => session.connection?.client;

  async function load(): Promise<void> {
    const c = client();
    const feed = podcast;
    if (!c || !feed) return;
    try {
      const found = await c.episodes({ podcast: feed });
      if (client() !== c || podcast !== feed) return;
      states = found;
    } catch (error) {
      if (client() !== c || podcast !== feed) return;
      if (isSyncError(error) && error.code === 'unsupported') {
        showUnsupported();
        return;
      }
      log.error('reading episodes', error);
    }
    render();
  }
  const reload = coalesce(load);

  function showUnsupported(): void {
    note.textContent = NOTE_UNSUPPORTED;
    note.dataset.unsupported = 'true';
    summary.textContent = '';
    list.replaceChildren();
    rows.clear();
  }

  /** The feed's episodes, then any other episode of this feed the store holds a state for. */
  function views(): EpisodeView[] {
    const known = catalog.slice();
    for (const s of states) {
      if (known.some((v) => stateOf(v.ref, [s]))) continue;
      const ref: EpisodeRef = { podcast: s.podcast, episode: s.episode, ...(s.guid ? { guid: s.guid } : {}) };
      known.push({ ref, title: fileName(s.episode), ...(s.total === undefined ? {} : { total: s.total }) });
    }
    return known;
  }

  function render(): void {
    const shown = views();
    const playing = player.playing();
    const wanted: HTMLLIElement[] = [];
    const keep = new Set<string>();
    for (const view of shown) {
      const key = view.ref.episode;
      let row = rows.get(key);
      if (!row) rows.set(key, (row = createEpisodeRow(view, hasAdmin ? actions : withoutElsewhere)));
      row.update(stateOf(view.ref, states), sameEpisode(playing, view.ref));
      keep.add(key);
      wanted.push(row.li);
    }
    for (const key of rows.keys()) if (!keep.has(key)) rows.delete(key);
    const current = list.children;
    if (current.length !== wanted.length || wanted.some((li, i) => current[i] !== li)) list.replaceChildren(...wanted);
    const pending = states.filter((s) => s.pending).length;
    summary.textContent = shown.length
      ? `${shown.length} episode${shown.length === 1 ? '' : 's'} · ${states.length} with a listening state · ${pending} waiting for the server${pending ? ' (Sync now sends them)' : ''}`
      : 'No episodes with a listening state yet.';
  }

  const actions: EpisodeActions = {
    play(view) {
      if (view.total !== undefined) player.play(view.ref, view.total);
    },
    pause: () => player.pause(),
    async seek(view, position) {
      try {
        await client()?.setProgress(view.ref, { position, ...(view.total === undefined ? {} : { total: view.total }) });
        log.add('action', `${fileName(view.ref.episode)} at ${playTime(position)} (setProgress)`);
      } catch (error) {
        log.error(`setProgress on ${fileName(view.ref.episode)}`, error);
      }
    },
    async markPlayed(view, played) {
      const c = client();
      if (!c) return;
      if (sameEpisode(player.playing(), view.ref)) player.pause();
      try {
        // The engine needs the length to mark an episode played; a player knows it from the feed.
        const state = stateOf(view.ref, states);
        if (played && state?.total === undefined && view.total !== undefined) {
          await c.setProgress(view.ref, { position: state?.position ?? 0, total: view.total });
        }
        await c.markPlayed(view.ref, played);
        log.add('action', `${fileName(view.ref.episode)} marked ${played ? 'played' : 'unplayed'} (markPlayed)`);
      } catch (error) {
        log.error(`markPlayed on ${fileName(view.ref.episode)}`, error);
      }
    },
    async elsewhere(view) {
      const a = await admin;
      if (!a) return;
      if (view.total === undefined) {
        log.add('error', `another device: the length of ${fileName(view.ref.episode)} is unknown`);
        return;
      }
      try {
        // The stored state now (the panel's copy may be a tick old): the phone acts after its last change.
        const at = await playElsewhere(a, view.ref, view.total, await client()?.episode(view.ref));
        log.add('server', `another device (phone) played ${fileName(view.ref.episode)} to ${playTime(at)}, stamped now; press Sync now to pull it`);
      } catch (error) {
        log.add('error', `server control failed (another device): ${error instanceof Error ? error.message : String(error)}`);
      }
    },
  };

  const { elsewhere: _, ...withoutElsewhere } = actions;

  function close(): void {
    const playing = player.playing();
    if (playing && playing.podcast === podcast) player.pause();
    podcast = undefined;
    catalog = [];
    states = [];
    rows.clear();
    list.replaceChildren();
    panel.hidden = true;
  }

  byId<HTMLButtonElement>('episodes-close').addEventListener('click', close);
  player.onChange(() => podcast && render());

  session.on((event) => {
    if (event.type === 'disconnected') {
      admin = Promise.resolve(undefined);
      close();
    }
    if (event.type === 'change' && podcast && event.episodes.some((e) => e.podcast === podcast)) reload();
    if (event.type === 'connected') admin = findAdmin(event.connection.settings.baseUrl);
  });

  async function show(sub: Subscription): Promise<void> {
    close();
    const feed = sub.feedUrl;
    podcast = feed;
    panel.hidden = false;
    feedLine.textContent = feed;
    note.textContent = '';
    delete note.dataset.unsupported;
    summary.textContent = 'Loading…';
    let a = await admin;
    // Not found at connect (a probe that timed out on a busy machine): ask again; only loopback servers are probed.
    const connection = session.connection;
    if (!a && connection) a = await (admin = findAdmin(connection.settings.baseUrl));
    const fetched = await feedEpisodes(a, feed);
    if (podcast !== feed) return;
    hasAdmin = a !== undefined;
    catalog = fetched.map((e) => ({ ref: { podcast: feed, episode: e.url, guid: e.guid }, title: e.title, total: e.duration, published: e.published }));
    note.textContent = catalog.length ? NOTE_CATALOG : NOTE_NO_CATALOG;
    await load();
    panel.scrollIntoView({ block: 'nearest' });
  }

  return { open: (sub) => void show(sub) };
}
