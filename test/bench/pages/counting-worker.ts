// The engine's module worker as an app writes its own (`exposeSyncEngine()` from `opa-sync/worker`), with its
// fetches counted (count-fetches.ts) from before the engine starts: for the dead-server section.
import { Dexie } from 'dexie';
import { exposeSyncEngine } from '../../../worker/index.ts';
import { countFetches } from './count-fetches.ts';

Dexie.debug = false;
countFetches();
exposeSyncEngine();
