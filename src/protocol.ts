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

/** Events the worker hands the page: the app's, and the client's own last-chance copy (what waits, as requests). */
export interface WorkerEvents extends SyncEvents {
  'last-chance': LastChanceRequest[];
}

/** The callback the page hands the worker for events. */
export type EventSink = <E extends keyof WorkerEvents>(event: E, payload: WorkerEvents[E]) => void;

/** What the worker entry exposes. */
export interface WorkerApi extends SyncApi {
  /** Create the engine in the worker; events go to `sink`. */
  start(options: WorkerStartOptions, sink: EventSink): Promise<void>;
  setOnline(online: boolean): Promise<void>;
  setVisible(visible: boolean): Promise<void>;
}
