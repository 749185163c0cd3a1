// One episode in the episodes panel: title, its listening state (position, played, pending, error), a
// play/pause button, a seek bar with skip buttons, mark played / unplayed and "another device". The row is
// kept and updated in place, so a seek bar being dragged is not reset by the re-render a tick causes.
import type { EpisodeRef, EpisodeState } from '../src/index.ts';
import { h } from './dom.ts';
import { errorText, playTime } from './format.ts';

/** An episode as the panel lists it: from the feed when known, else from its stored state alone. */
export interface EpisodeView {
  ref: EpisodeRef;
  title: string;
  /** Seconds, from the feed (or the stored state). */
  total?: number;
  published?: string;
}

/** What a row can ask for. */
export interface EpisodeActions {
  play(view: EpisodeView): void;
  pause(): void;
  seek(view: EpisodeView, position: number): Promise<void>;
  markPlayed(view: EpisodeView, played: boolean): Promise<void>;
  /** Absent when the server has no controls (not the reference server). */
  elsewhere?: (view: EpisodeView) => Promise<void>;
}

/** A row and how to show a new state in it. */
export interface EpisodeRow {
  li: HTMLLIElement;
  update(state: EpisodeState | undefined, playing: boolean): void;
}

const BACK_S = 15;
const FORWARD_S = 30;

function busy(button: HTMLButtonElement, work: () => Promise<void>): void {
  button.disabled = true;
  void work().finally(() => (button.disabled = false));
}

/** Create the row of `view`. */
export function createEpisodeRow(view: EpisodeView, actions: EpisodeActions): EpisodeRow {
  const { title } = view;
  let state: EpisodeState | undefined;
  let playing = false;
  let dragging = false;
  const total = (): number | undefined => view.total ?? state?.total;
  const position = (): number => state?.position ?? 0;

  const badges = h('span', { class: 'ep-badges' });
  const time = h('span', { class: 'ep-time mono' });
  const seekBar = h('input', { type: 'range', class: 'ep-seek', min: 0, step: 1, 'aria-label': `Position in ${title}` });
  const playButton = h('button', { type: 'button', class: 'btn btn-small btn-play' });
  const back = h('button', { type: 'button', class: 'btn btn-small', 'aria-label': `Back ${BACK_S} s in ${title}` }, `−${BACK_S} s`);
  const forward = h('button', { type: 'button', class: 'btn btn-small', 'aria-label': `Forward ${FORWARD_S} s in ${title}` }, `+${FORWARD_S} s`);
  const played = h('button', { type: 'button', class: 'btn btn-small' });
  const elsewhere =
    actions.elsewhere &&
    h('button', { type: 'button', class: 'btn btn-small', 'aria-label': `Another device plays ${title}`, title: 'The phone uploads a play action to the server, stamped now' }, 'Another device');

  const seek = (to: number): Promise<void> => actions.seek(view, Math.max(0, Math.min(total() ?? to, Math.round(to))));
  playButton.addEventListener('click', () => (playing ? actions.pause() : actions.play(view)));
  back.addEventListener('click', () => busy(back, () => seek(position() - BACK_S)));
  forward.addEventListener('click', () => busy(forward, () => seek(position() + FORWARD_S)));
  seekBar.addEventListener('input', () => {
    dragging = true;
    time.textContent = timeText(Number(seekBar.value));
  });
  seekBar.addEventListener('change', () => {
    dragging = false;
    void seek(Number(seekBar.value));
  });
  played.addEventListener('click', () => busy(played, () => actions.markPlayed(view, !state?.played)));
  if (elsewhere) elsewhere.addEventListener('click', () => busy(elsewhere, () => actions.elsewhere!(view)));

  const meta = [view.published && new Date(view.published).toLocaleDateString(), total() !== undefined && playTime(total()!)].filter(Boolean).join(' · ');
  const li = h(
    'li',
    { class: 'episode', 'data-episode': view.ref.episode },
    h('div', { class: 'ep-head' }, h('span', { class: 'ep-title', title: view.ref.episode }, title), h('span', { class: 'ep-meta' }, meta), badges),
    h('div', { class: 'ep-player' }, playButton, back, seekBar, forward, time),
    h('div', { class: 'ep-actions' }, played, elsewhere),
    h('div', { class: 'ep-error', hidden: true }),
  );
  const errorBox = li.querySelector('.ep-error') as HTMLElement;

  function timeText(at: number): string {
    const t = total();
    return t === undefined ? playTime(at) : `${playTime(at)} / ${playTime(t)}`;
  }

  function update(next: EpisodeState | undefined, nowPlaying: boolean): void {
    state = next;
    playing = nowPlaying;
    const t = total();
    li.dataset.position = state?.position === undefined ? '' : String(state.position);
    li.dataset.played = String(state?.played ?? false);
    li.dataset.pending = String(state?.pending ?? false);
    li.dataset.playing = String(playing);
    li.classList.toggle('is-playing', playing);
    li.classList.toggle('is-played', Boolean(state?.played));
    playButton.textContent = playing ? 'Pause' : 'Play';
    playButton.setAttribute('aria-label', `${playing ? 'Pause' : 'Play'} ${title}`);
    playButton.disabled = t === undefined; // a player needs the length to simulate one
    seekBar.disabled = back.disabled = forward.disabled = t === undefined;
    if (t !== undefined) seekBar.max = String(t);
    if (!dragging) {
      seekBar.value = String(position());
      time.textContent = timeText(position());
    }
    played.textContent = state?.played ? 'Mark unplayed' : 'Mark played';
    played.setAttribute('aria-label', `${state?.played ? 'Mark unplayed' : 'Mark played'}: ${title}`);
    badges.replaceChildren(
      ...[
        state?.played && h('span', { class: 'badge badge-played', title: `Played (${state.changedAt})` }, 'played'),
        state?.pending && h('span', { class: 'badge badge-pending', title: 'A local change waits for the server' }, 'pending'),
        state?.error && h('span', { class: 'badge badge-failed', title: errorText(state.error) }, 'refused'),
      ].filter((b): b is HTMLSpanElement => Boolean(b)),
    );
    errorBox.hidden = !state?.error;
    errorBox.textContent = state?.error ? `The server refused the last change: ${errorText(state.error)}` : '';
  }

  update(undefined, false);
  return { li, update };
}
