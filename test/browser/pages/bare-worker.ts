// The package's worker entry with neither Web Locks nor BroadcastChannel (requests logged).
import './fetch-log.ts';
import './hide-locks.ts';
import './hide-channel.ts';
import '../../../worker/entry.ts';
