// What crosses between the page and the worker (over comlink). Types only.
import type { ClientOptions, SyncApi, SyncEvents } from './types.ts';

/** Options sent to the worker: the client's options without the worker itself. */
export type WorkerStartOptions = Omit<ClientOptions, 'worker' | 'onLastChance'>;

/**
 * One request of the last-chance copy: what the next push would send, credentials left out (the page adds its
 * own). The page sends it with `keepalive` as it goes away: the worker dies with it.
 */
export interface LastChanceRequest {
  /** The HTTP method. */
  method: 'POST' | 'PATCH' | 'DELETE';
  /** Relative to `baseUrl`. */
  path: string;
  /** The request's headers, credentials left out. */
  headers: Record<string, string>;
  /** The JSON body as it goes on the wire. */
  body?: string;
}

/**
 * What the worker posts on its own endpoint with each new last-chance copy: on the channel its answers take, so
 * the page holds the copy before the answer of the edit that changed it arrives.
 */
export interface LastChanceMessage {
  'opa-last-chance': LastChanceRequest[];
}

/** The callback the page hands the worker for the app's events. */
export type EventSink = <E extends keyof SyncEvents>(event: E, payload: SyncEvents[E]) => void;

/** What the worker entry exposes. */
export interface WorkerApi extends SyncApi {
  /** Create the engine in the worker; events go to `sink`. */
  start(options: WorkerStartOptions, sink: EventSink): Promise<void>;
  setOnline(online: boolean): Promise<void>;
  setVisible(visible: boolean): Promise<void>;
}
