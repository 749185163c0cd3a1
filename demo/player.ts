// Simulated playback: while an episode "plays", a timer moves it on by one second every second through
// `setProgress`, as a player reports its position. Each tick starts from the stored state (`episode()`), as
// the README tells players to: a newer position from another device, pulled meanwhile, is where it goes on.
import type { EpisodeRef } from '../src/index.ts';
import type { Log } from './log.ts';
import type { Session } from './session.ts';

const TICK_MS = 1000;

/** An episode as the log names it: its file name. */
const named = (ref: EpisodeRef): string => ref.episode.split('?')[0]!.split('/').pop() || ref.episode;

/** The one episode playing (or none); `onChange` hears play and pause. */
export interface Player {
  playing(): EpisodeRef | undefined;
  play(ref: EpisodeRef, total: number): void;
  pause(): void;
  onChange(listener: () => void): void;
}

/** Whether two refs name the same episode of the same feed (the demo's episodes come from one list per feed). */
export function sameEpisode(a: EpisodeRef | undefined, b: EpisodeRef): boolean {
  return a !== undefined && a.podcast === b.podcast && a.episode === b.episode;
}

interface Playing {
  ref: EpisodeRef;
  total: number;
  timer?: ReturnType<typeof setTimeout>;
}

/** The page's player (one for the page, whichever feed's episodes are shown). */
export function createPlayer(session: Session, log: Log): Player {
  let current: Playing | undefined;
  const listeners = new Set<() => void>();
  const changed = (): void => listeners.forEach((listener) => listener());

  function stop(): void {
    if (!current) return;
    clearTimeout(current.timer);
    current = undefined;
    changed();
  }

  async function tick(mine: Playing): Promise<void> {
    const client = session.connection?.client;
    if (!client || current !== mine) return;
    const { ref, total } = mine;
    try {
      const state = await client.episode(ref);
      // Played, or at the end: play it again from the start, as players do.
      const from = state && !state.played && (state.position ?? 0) < total ? (state.position ?? 0) : 0;
      const position = Math.min(total, from + 1);
      if (current !== mine) return;
      if (position >= total) {
        await client.markPlayed(ref, true);
        log.add('action', `played to the end: ${named(ref)} (markPlayed)`);
        stop();
        return;
      }
      await client.setProgress(ref, { position, total });
    } catch (error) {
      log.error(`playing ${named(ref)}`, error);
      if (current === mine) stop();
      return;
    }
    if (current === mine) mine.timer = setTimeout(() => void tick(mine), TICK_MS);
  }

  session.on((event) => {
    if (event.type === 'disconnected') stop();
  });

  return {
    playing: () => current?.ref,
    play(ref, total) {
      stop();
      const mine: Playing = { ref, total };
      current = mine;
      mine.timer = setTimeout(() => void tick(mine), TICK_MS);
      log.add('action', `playing ${named(ref)}: setProgress every second`);
      changed();
    },
    pause() {
      if (current) log.add('action', `paused ${named(current.ref)}`);
      stop();
    },
    onChange(listener) {
      listeners.add(listener);
    },
  };
}
