// Wire shapes of the gPodder v2 and Nextcloud gPodder Sync subscription endpoints, and the gPodder
// reference server's own options, views and control types. No logic here.
import type { FaultMatch, FaultOptions, RequestLogEntry, ServerTime } from '../types.ts';

/** The body of `GET /api/2/subscriptions/{user}/{device}.json` and of the Nextcloud `subscriptions`. */
export interface WireChanges {
  add: string[];
  remove: string[];
  /** Server clock, seconds. */
  timestamp: number;
  /** opodsync adds it to every answer, always empty. */
  update_urls?: [string, string][];
}

/** The body of a subscriptions POST (`/api/2/...` or Nextcloud `subscription_change/create`). */
export interface WireUpload {
  add?: string[];
  remove?: string[];
}

/** The answer to a subscriptions POST; the Nextcloud app sends `timestamp` alone. */
export interface WireUploadResult {
  /** Server clock, seconds. */
  timestamp: number;
  /** `[sent, stored]` for each URL the server rewrote; `stored` is "" when it refused the URL. */
  update_urls?: [string, string][];
}

/** The body of `POST /api/2/devices/{user}/{device}.json`. */
export interface WireDeviceUpdate {
  caption?: string;
  type?: string;
}

/** One item of `GET /api/2/devices/{user}.json` (mygpo's shape). */
export interface WireDevice {
  id: string;
  caption: string;
  type: string;
  subscriptions: number;
}

/** `GET /api/2/sync-devices/{user}.json` and the answer to its POST. */
export interface WireSyncStatus {
  synchronized: string[][];
  'not-synchronized': string[];
}

/** The body of `POST /api/2/sync-devices/{user}.json`. */
export interface WireSyncRequest {
  synchronize?: string[][];
  'stop-synchronize'?: string[];
}

/**
 * One episode action of an upload (`POST /api/2/episodes/{user}.json`, Nextcloud `episode_action/create`):
 * as clients send it. Servers read it loosely, so every field is optional here.
 */
export interface WireEpisodeAction {
  podcast?: string;
  episode?: string;
  action?: string;
  /** UTC, `YYYY-MM-DDTHH:MM:SS` (naive means UTC; every server accepts it). */
  timestamp?: string;
  device?: string;
  guid?: string;
  started?: number;
  position?: number;
  total?: number;
}

/** One action of a pull, as the servers answer it (fields vary by server, see the README). */
export interface WireEpisodeActionOut {
  podcast: string;
  episode: string;
  /** mygpo: `play`, …; Nextcloud app: `PLAY`; opodsync: as uploaded, lower-cased. */
  action: string;
  /** mygpo: naive ISO (microseconds when not 0); Nextcloud app: `+00:00`; opodsync: `Z`. */
  timestamp: string;
  /** mygpo: the guid of the feed's episode (null when unknown); the others: as uploaded. */
  guid?: string | null;
  device?: string;
  started?: number | null;
  position?: number | null;
  total?: number | null;
}

/** The body of an episode actions pull. */
export interface WireEpisodeActions {
  actions: WireEpisodeActionOut[];
  /** Seconds. mygpo: the last returned action's time (its page cursor), else now; the others: now. */
  timestamp: number;
}

/** The answer to an episode actions upload (the Nextcloud app sends `timestamp` alone). */
export interface WireEpisodeUploadResult {
  timestamp: number;
  update_urls?: [string, string][];
}

/**
 * Whose behaviour the server copies. `'mygpo'`: each path family as its original server does it
 * (gpodder.net for `/api/2`, the Nextcloud gPodder Sync app for `/index.php/apps/gpoddersync`).
 * `'opodsync'`: both families as opodsync 0.5.3 serves them.
 */
export type GpodderDialect = 'mygpo' | 'opodsync';

/** Options of `startGpodderServer`. */
export interface GpodderServerOptions {
  /** TCP port on 127.0.0.1; 0 picks a free one. @default 0 */
  port?: number;
  /** @default 'mygpo' */
  dialect?: GpodderDialect;
  /** Accounts, name to password. @default { alice: 'alice-password' } */
  users?: Record<string, string>;
  /** Realistic subscriptions to create for every user at start (on the account, see `seed`). @default 0 */
  seed?: number;
  /** Delay before every API answer, in ms. @default 0 */
  latencyMs?: number;
  /** The server's time (as the OPA server's `time`): `now()` in ms, whose seconds are the wire timestamps, and the latency timers. @default the wall clock */
  time?: ServerTime;
  /**
   * The device `seed` registers first under mygpo (which keeps a list per device), so the seeded list
   * is what a client with that device id pulls; the engine's default device is `opa-sync`. @default 'opa-sync'
   */
  seedDevice?: string;
  /** Seed of the random source the `seed` feeds come from. @default a new one every start */
  randomSeed?: number;
  /** Keep the state in this JSON file (read at start, written atomically after every change); see the README. @default in memory only */
  dataFile?: string;
  /**
   * Answer CORS (every origin, preflights before credentials), as the OPA reference server does, so a page on
   * another origin needs no proxy. `false` answers as the real opodsync does: no CORS headers, and a preflight
   * gets 401 (the opodsync dialect's parity with it is checked so). @default true
   */
  cors?: boolean;
  /**
   * What a mygpo `/api/2` subscription pull answers of the actions stamped ahead of the server's clock (its clock
   * was set back after stamping them). `'hidden'`: the net effect of the actions in (since, now], as mygpo's source
   * bounds it. `'listed'`: of every action after `since`, as an action log without that bound answers: each one
   * stamped before the step is in every answer asked from before its stamp, until the clock passes it again. The
   * opodsync rows and the Nextcloud app's are listed whatever their stamp (a row says its current state).
   * @default 'hidden'
   */
  ahead?: 'hidden' | 'listed';
}

/** Which episode action store a read names. */
export interface EpisodeLogTarget {
  /** @default the first configured user */
  user?: string;
  /**
   * `'api2'` (default): the `/api/2` store (mygpo's log; under opodsync its one log for both path
   * families). `'nextcloud'`: the Nextcloud paths' store (the gPodder Sync app's rows; under opodsync
   * the same log as `'api2'`).
   */
  family?: 'api2' | 'nextcloud';
}

/** One stored episode action as the server holds it, in its store's order. */
export interface EpisodeActionView {
  podcast: string;
  episode: string;
  /** As stored: mygpo as sent, the Nextcloud app `PLAY`, opodsync lower-cased. */
  action: string;
  /** The action's own time (the client's `timestamp`), in seconds (fractions cut). */
  timestamp: number;
  /** When the server stored it (its clock), in seconds. */
  uploaded: number;
  device?: string;
  guid?: string | null;
  started?: number | null;
  position?: number | null;
  total?: number | null;
}

/** One made-up episode of a feed (`feedEpisodes`): the reference server's extra, no real server serves feeds. */
export interface CatalogEpisode {
  title: string;
  /** The enclosure (media) URL: what episode actions call `episode`. */
  url: string;
  /** The RSS guid. */
  guid: string;
  /** Seconds. */
  duration: number;
  /** ISO 8601 UTC. */
  published: string;
}

/** Which subscription list an in-process operation reads or writes. */
export interface ListTarget {
  /** @default the first configured user */
  user?: string;
  /**
   * A device id (mygpo keeps a list per device; opodsync ignores it). Omitted: the account as a whole,
   * which under mygpo means every device the user has now, its sync groups, and the Nextcloud list.
   */
  device?: string;
}

/** One URL of a list as the server holds it. */
export interface GpodderRowView {
  url: string;
  subscribed: boolean;
  /** When it last changed, in the server's seconds. */
  changed: number;
}

/** A registered device. */
export interface GpodderDeviceView {
  id: string;
  caption: string;
  type: string;
  /** URLs subscribed on it now. */
  subscriptions: number;
}

/** Another client changing the account: upload semantics without HTTP, so a pull sees the changes. */
export interface GpodderForeign {
  /** Like a POST of `{add, remove}` from `target`'s device (or the website, for the whole account); throws `GpodderRefusal` as HTTP would refuse it. */
  upload(change: WireUpload, target?: ListTarget): WireUploadResult;
  /** Subscribe `urls`. */
  add(urls: string[], target?: ListTarget): WireUploadResult;
  /** Unsubscribe `urls`. */
  remove(urls: string[], target?: ListTarget): WireUploadResult;
  /**
   * Episode actions uploaded by another client (each as on the wire: its own `device`, and a
   * `timestamp` of any age, so a late upload of an old action is one call). Under mygpo they go to
   * both stores, each by its own rules (mygpo's log; the Nextcloud app's rows keep plays only);
   * under opodsync to its one log (which subscribes an unknown feed, as opodsync does). Throws
   * `ForeignError` with the status the `/api/2` upload would get; returns that upload's answer.
   */
  actions(actions: unknown[], user?: string): WireEpisodeUploadResult;
}

/** A running gPodder reference server and its controls. */
export interface GpodderServer {
  /** `http://127.0.0.1:PORT`: a client's `baseUrl` for both path families. */
  readonly url: string;
  readonly origin: string;
  readonly port: number;
  readonly dialect: GpodderDialect;
  /** The configured accounts, name to password. */
  readonly users: Readonly<Record<string, string>>;
  /** Stop listening, drop every socket, clear timers. */
  close(): Promise<void>;
  /** Back to the start state: the seeded data only, no devices, no sessions, no faults, empty log, no latency. */
  reset(): void;
  /** Subscribe `n` realistic feeds on `target`; returns their URLs. */
  seed(n: number, target?: ListTarget): string[];
  /** Every URL `target`'s list ever held, in first-seen order (the account list when no device is named). */
  state(target?: ListTarget): GpodderRowView[];
  /** The URLs `target`'s list holds subscribed now. */
  subscribed(target?: ListTarget): string[];
  /** Create or update a device, as `POST /api/2/devices/...` does. */
  registerDevice(device: string, update?: WireDeviceUpdate, user?: string): void;
  /** The user's devices. */
  devices(user?: string): GpodderDeviceView[];
  /** Group devices (mygpo's sync-devices): writes on one apply to all, grouping merges their subscriptions. */
  syncDevices(groups: string[][], user?: string): void;
  /** The server clock now, in seconds: what the next answer's `timestamp` would be. */
  timestamp(): number;
  /** The episode actions a store holds, in its order (see `EpisodeLogTarget`). */
  episodeLog(target?: EpisodeLogTarget): EpisodeActionView[];
  /** A few made-up episodes of `feedUrl`, the same for the same URL in every run (see the README). */
  feedEpisodes(feedUrl: string): CatalogEpisode[];
  /** Changes made by other clients. */
  readonly foreign: GpodderForeign;
  setLatency(ms: number): void;
  failNext(count: number, status: number, match?: FaultMatch, opts?: FaultOptions): void;
  dropNext(count: number, match?: FaultMatch, opts?: Pick<FaultOptions, 'afterHandling'>): void;
  malformNext(count: number, match?: FaultMatch, body?: string, opts?: Pick<FaultOptions, 'afterHandling'>): void;
  clearFaults(): void;
  /** API requests seen so far, oldest first (admin requests are not logged). */
  log(): RequestLogEntry[];
  clearLog(): void;
}
