// Listening state as the engine exchanges it with a server: the `play` action (read and uploaded), and what a
// protocol's episode side must do. gPodder v2 and the Nextcloud app speak it (gpodder/); the Open Podcast API has none yet.
import type { LastChanceRequest } from '../../src/protocol.ts';

/** A `play` action as uploaded: seconds throughout; `timestamp` is UTC `YYYY-MM-DDTHH:MM:SS`. */
export interface WirePlayAction {
  podcast: string;
  episode: string;
  guid?: string;
  device?: string;
  action: 'play';
  timestamp: string;
  started: number;
  position: number;
  /** Absent when the length is unknown. */
  total?: number;
}

/** A `play` action as read: its time in epoch ms (whole seconds); whole-second position and, when known, total. */
export interface PlayAction {
  podcast: string;
  episode: string;
  guid?: string;
  at: number;
  position?: number;
  total?: number;
}

/** What a pull answer held besides its `play` actions (handed out one by one as they are read). */
export interface EpisodeAnswer {
  /** How many actions the answer held, of any kind (mygpo pages by a full answer of 1,000). */
  count: number;
  /** Of those, how many were plays (or items) that did not validate: skipped, and counted in the run's report. */
  skipped: number;
  /** The server's `timestamp` (seconds). */
  timestamp: number;
}

/** What an upload's answer says of the URLs sent: each one the server rewrote, and where to ("" = refused). */
export interface EpisodeUploaded {
  renamed: Map<string, string>;
}

/** What the engine asks of a protocol's episode actions. */
export interface EpisodeTransport {
  /** One pull request: the actions since `since` (seconds), each usable `play` handed to `take` as it is read. */
  pull(since: number, take: (action: PlayAction) => void): Promise<EpisodeAnswer>;
  /** Upload actions (at most 100); resolves once the server took them all, else throws a `SyncError`. */
  send(actions: readonly WirePlayAction[]): Promise<EpisodeUploaded>;
  /** The upload `send` would make, for the page to send as it goes away (every server takes an action twice harmlessly). */
  lastChance?(actions: readonly WirePlayAction[]): LastChanceRequest;
}
