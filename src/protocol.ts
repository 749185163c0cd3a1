// What crosses between the page and the worker (over comlink). Types only.
import type { ClientOptions, SyncApi, SyncEvents } from './types.ts';

/** Options sent to the worker: the client's options without the worker itself. */
export type WorkerStartOptions = Omit<ClientOptions, 'worker'>;

/** The callback the page hands the worker for events. */
export type EventSink = <E extends keyof SyncEvents>(event: E, payload: SyncEvents[E]) => void;

/** What the worker entry exposes. */
export interface WorkerApi extends SyncApi {
  /** Create the engine in the worker; events go to `sink`. */
  start(options: WorkerStartOptions, sink: EventSink): Promise<void>;
  setOnline(online: boolean): Promise<void>;
  setVisible(visible: boolean): Promise<void>;
}
