// The package's worker entry without Web Locks (requests logged, as in logged-worker.ts).
import './fetch-log.ts';
import './hide-locks.ts';
import '../../../worker/entry.ts';
