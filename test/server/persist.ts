// `--data FILE`: a server's state written after every change and read back at start, so stopping the
// server and starting it again is a real outage, not a new server.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

/** A file a server keeps its state in. */
export interface DataFile<T> {
  /** The state last saved, or undefined when the file does not exist yet; throws on a file that is not ours. */
  load(): T | undefined;
  /** Write `state` atomically: a temporary file beside it, then a rename over it (a crash leaves the old or the new, never half). */
  save(state: T): void;
}

/** The file at `path`, holding `kind` (checked on load so an OPA file never feeds a gPodder server). */
export function dataFile<T>(path: string, kind: string): DataFile<T> {
  return {
    load() {
      if (!existsSync(path)) return undefined;
      const parsed = JSON.parse(readFileSync(path, 'utf8')) as { kind?: unknown; version?: unknown; state?: T };
      if (parsed.kind !== kind || parsed.version !== 1 || parsed.state === undefined) {
        throw new Error(`${path} does not hold ${kind} state (version 1): start with another --data file`);
      }
      return parsed.state;
    },
    save(state) {
      const temp = `${path}.${process.pid}.tmp`;
      writeFileSync(temp, JSON.stringify({ kind, version: 1, state }));
      renameSync(temp, path);
    },
  };
}
