// The engine's public face: the method set an app calls, in-process or through the page client.
import type { LastChanceRequest } from '../../src/protocol.ts';
import type { Listener, SyncApi, SyncEvents } from '../../src/types.ts';

/** The engine: the shared method set, events, and the page's connectivity and visibility signals. */
export interface SyncEngine extends SyncApi {
  /** Listen to an event; returns the unsubscribe. */
  on<E extends keyof SyncEvents>(event: E, listener: Listener<E>): () => void;
  /** The page's `online`/`offline` events (workers do not reliably get their own). */
  setOnline(online: boolean): void;
  /** The page's visibility; becoming visible triggers a pull. */
  setVisible(visible: boolean): void;
  /**
   * Hear the last-chance copy (what waits, as the requests the next push would make) now and whenever it changes:
   * the page client sends it as the page goes away. It is called before the edit that changed the copy resolves,
   * and never with a copy older than one it was given. Returns the unsubscribe.
   */
  onLastChance(listener: (copy: LastChanceRequest[]) => unknown): () => void;
}
