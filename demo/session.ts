// The one SyncClient the page talks to: created on connect, closed on disconnect. Views listen here.
import { createSyncClient, type Auth, type EpisodeRef, type SyncClient, type SyncStatus } from '../src/index.ts';
import type { Settings } from './settings.ts';

/** The open connection. */
export interface Connection {
  client: SyncClient;
  settings: Settings;
}

/** What views hear about. */
export type SessionEvent =
  | { type: 'connected'; connection: Connection }
  | { type: 'disconnected' }
  /** Subscriptions (`guids`) and episodes whose local view changed; `queue` when `pending()`/`failed()` may have. */
  | { type: 'change'; guids: string[]; episodes: EpisodeRef[]; queue: boolean }
  | { type: 'status'; status: SyncStatus };

/** A change that names episodes only (listening state): subscriptions and the queue are as they were. */
export function episodeOnly(event: { guids: string[]; episodes: EpisodeRef[]; queue: boolean }): boolean {
  return event.guids.length === 0 && event.episodes.length > 0 && !event.queue;
}

/** Connect/disconnect and fan the client's events out to the views. */
export interface Session {
  readonly connection: Connection | undefined;
  connect(settings: Settings): Connection;
  disconnect(): Promise<void>;
  on(listener: (event: SessionEvent) => void): () => void;
}

/** Retry quickly in a demo, so a recovered server is noticed within seconds (the library defaults are 1 s .. 5 min). */
const DEMO_RETRY = { baseDelay: 1000, maxDelay: 15_000 };
/** A background pull every minute. */
const DEMO_PULL_INTERVAL = 60_000;

/** Where the page's last-chance send is noted as the page goes (read, logged and removed by the next page load). */
export const LAST_CHANCE_NOTE = 'opa-sync-demo:last-chance';

/** The credentials the settings name: a bearer token for OPA, HTTP Basic for the gPodder protocols. */
export function authOf(settings: Settings): Auth {
  return settings.protocol === 'opa' ? { type: 'bearer', token: settings.token } : { type: 'basic', username: settings.username, password: settings.password };
}

/** Create the page's session (no client until `connect`). */
export function createSession(): Session {
  let connection: Connection | undefined;
  const listeners = new Set<(event: SessionEvent) => void>();
  const emit = (event: SessionEvent): void => {
    for (const listener of listeners) listener(event);
  };

  return {
    get connection() {
      return connection;
    },

    connect(settings) {
      const client = createSyncClient({
        protocol: settings.protocol,
        baseUrl: settings.baseUrl,
        auth: authOf(settings),
        pageSize: settings.pageSize,
        pullInterval: DEMO_PULL_INTERVAL,
        retry: DEMO_RETRY,
        // The page is going away: its log goes with it, so the send is noted for the next load to show.
        onLastChance: (sent) => sessionStorage.setItem(LAST_CHANCE_NOTE, JSON.stringify({ ...sent, at: Date.now() })),
      });
      const mine: Connection = { client, settings };
      connection = mine;
      client.on('change', ({ guids, episodes = [], queue }) => {
        if (connection === mine) emit({ type: 'change', guids, episodes, queue: queue === true });
      });
      client.on('status', (status) => {
        if (connection === mine) emit({ type: 'status', status });
      });
      emit({ type: 'connected', connection: mine });
      // The first status event comes with the first state change; show where things stand now.
      client.status().then(
        (status) => connection === mine && emit({ type: 'status', status }),
        () => undefined,
      );
      return mine;
    },

    async disconnect() {
      const current = connection;
      if (!current) return;
      connection = undefined;
      emit({ type: 'disconnected' });
      await current.client.close();
    },

    on(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
  };
}
