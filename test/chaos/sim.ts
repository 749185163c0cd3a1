// Simulated time for the chaos scenario, so that a seed replays exactly whatever the machine's load.
//
// The engine, the reference server and the network between them read one virtual clock. Virtual time moves
// only when the process is quiet: no pending `setImmediate` (fake-indexeddb's only scheduler, so no database
// work is under way) and no real request in flight. Then the earliest timer fires. Real HTTP requests are
// made one at a time, alone, at their virtual arrival time (`exclusive`), so the server sees them in an
// order fixed by the seed, and no socket's timing can reorder what the engine does. The wall clock decides
// nothing; a load spike only makes a run slower.
//
// The device's wall clock can step (`stepDeviceClock`): NTP, a user fixing the time, a VM resumed. A step
// moves what the engine's `clock.now()` reads, and nothing else: not `clock.monotonic()`, not the timers
// already set (platform timers run on monotonic time), not the server's clock. Timers longer than a platform
// timer can hold (2^31 - 1 ms) fire after 1 ms, as Node's and browsers' `setTimeout` do.
import type { Clock } from '../../src/types.ts';

/** A virtual clock and the driver that moves it. */
export interface Simulation {
  /** The engine's clock: the device's wall clock (`now`, which may step), its monotonic clock and the timers. */
  readonly clock: Clock;
  /** Virtual ms since the epoch (monotonic: what timers and traces read; never steps). */
  now(): number;
  /** Step the device's wall clock by `ms` (negative: back); the steps so far add up in `deviceOffset`. */
  stepDeviceClock(ms: number): void;
  /** How far the device's wall clock is off virtual time now, ms. */
  readonly deviceOffset: number;
  /** Resolve after `ms` of virtual time; a given signal rejects it early with its reason. */
  sleep(ms: number, signal?: AbortSignal | null): Promise<void>;
  /** Run real I/O when everything else is quiet, with nothing else running until it settles. */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  /** Let the event loop turn `n` times without moving virtual time (to cut work off midway). */
  ticks(n: number): Promise<void>;
  /**
   * A server's time: each reading moves virtual time on by 1 ms, so a server whose clock is strictly
   * increasing (several writes in one ms) never runs ahead of the time the engine measures.
   */
  readonly serverTime: { now(): number; setTimeout: Clock['setTimeout']; clearTimeout: Clock['clearTimeout'] };
  /** Stop the driver (timers left pending never fire). */
  stop(): void;
  /** The most timers that fired within one simulated second so far. */
  readonly busiestSecond: number;
  /** Called once when more than RUNAWAY_FIRES timers fire within one simulated second (a timer loop). */
  onRunaway: ((message: string) => void) | undefined;
}

/**
 * Timer fires within one simulated second that no schedule of the engine, the server or the script explains:
 * an engine that re-arms a timer it cannot hold (a delay above 2^31 - 1 ms fires after 1 ms) fires 1,000 a
 * second on its own; the scenarios' busiest healthy second fires about 200. Requests' slots do not count (a
 * store of hundreds of feeds pulled in pages of two makes hundreds of requests a second when the app keeps
 * calling sync()): the transport bounds requests on its own (`RUNAWAY`).
 */
export const RUNAWAY_FIRES = 800;

interface Timer {
  at: number;
  seq: number;
  fire: () => void | Promise<void>;
  cancelled: boolean;
  /** A real request's slot (`exclusive`): requests have a runaway bound of their own (transport.ts), not this one. */
  request?: boolean;
}

/** Virtual time starts here (a fixed date, so timestamps in traces repeat too). */
const EPOCH = Date.UTC(2026, 0, 1);

/** The longest delay a platform timer holds; a longer (or NaN) one fires after 1 ms. */
const TIMER_MAX = 2 ** 31 - 1;

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function pendingImmediates(): number {
  let n = 0;
  for (const resource of process.getActiveResourcesInfo()) if (resource === 'Immediate') n++;
  return n;
}

// One quiet detector for the whole process: two simulations polling on their own would each see the other's
// poll as pending work and wait for ever. Quiet is global, so every simulation waiting is told at once.
let waiters: (() => void)[] = [];
let polling = false;

/** Resolves at the next event-loop turn with no other immediate pending. */
function whenQuiet(): Promise<void> {
  return new Promise<void>((resolve) => {
    waiters.push(resolve);
    if (polling) return;
    polling = true;
    void (async () => {
      while (waiters.length) {
        await turn();
        if (pendingImmediates() > 0) continue;
        const ready = waiters;
        waiters = [];
        for (const wake of ready) wake();
      }
      polling = false;
    })();
  });
}

/** Start a simulation; `random` is the seeded randomness the engine draws from. */
export function createSimulation(random: () => number, start = EPOCH): Simulation {
  let now = start;
  let offset = 0;
  let seq = 0;
  let running = true;
  const timers: Timer[] = [];
  const fired: number[] = [];
  let busiest = 0;
  let runaway = false;

  function schedule(ms: number, fire: Timer['fire'], request = false): Timer {
    // As the platform does: a delay a timer cannot hold (too long, NaN) fires at once (1 ms).
    const delay = Number.isNaN(ms) || ms > TIMER_MAX ? 1 : Math.max(0, ms);
    const timer: Timer = { at: now + delay, seq: seq++, fire, cancelled: false, request };
    // Kept sorted by (at, seq): the earliest first, ties in the order they were set.
    let i = timers.length;
    while (i > 0 && (timers[i - 1]!.at > timer.at || (timers[i - 1]!.at === timer.at && timers[i - 1]!.seq > timer.seq))) i--;
    timers.splice(i, 0, timer);
    return timer;
  }

  async function drive(): Promise<void> {
    while (running) {
      await whenQuiet();
      if (!running) return;
      const next = timers.shift();
      if (!next) {
        // Nothing scheduled and nothing running: whatever is awaited is real (a server closing). Wait for it.
        await new Promise((resolve) => setTimeout(resolve, 1));
        continue;
      }
      if (next.cancelled) continue;
      now = Math.max(now, next.at);
      if (next.request) {
        await next.fire();
        continue;
      }
      fired.push(now);
      while (fired[0]! < now - 1000) fired.shift();
      busiest = Math.max(busiest, fired.length);
      if (fired.length > RUNAWAY_FIRES && !runaway) {
        runaway = true;
        api.onRunaway?.(`spin: ${fired.length} timers fired within one simulated second: stopped`);
      }
      await next.fire();
    }
  }
  void drive();

  const api: Simulation = {
    clock: {
      now: () => now + offset,
      monotonic: () => now,
      setTimeout: (callback, ms) => schedule(ms, callback),
      clearTimeout: (handle) => {
        if (handle && typeof handle === 'object' && 'cancelled' in handle) (handle as Timer).cancelled = true;
      },
      random,
    },
    now: () => now,
    stepDeviceClock(ms) {
      offset += ms;
    },
    get deviceOffset() {
      return offset;
    },
    sleep(ms, signal) {
      return new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        const onAbort = () => {
          timer.cancelled = true;
          reject(signal!.reason);
        };
        const timer = schedule(ms, () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        });
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    },
    exclusive<T>(work: () => Promise<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        schedule(0, () => work().then(resolve, reject), true);
      });
    },
    serverTime: {
      now: () => ++now,
      setTimeout: (callback, ms) => schedule(ms, callback),
      clearTimeout: (handle) => {
        if (handle && typeof handle === 'object' && 'cancelled' in handle) (handle as Timer).cancelled = true;
      },
    },
    async ticks(n) {
      for (let i = 0; i < n; i++) await turn();
    },
    stop() {
      running = false;
      timers.length = 0;
    },
    get busiestSecond() {
      return busiest;
    },
    onRunaway: undefined,
  };
  return api;
}
