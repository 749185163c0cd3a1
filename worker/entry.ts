// The module worker the page client spawns by default.
import { Dexie } from 'dexie';
import { exposeSyncEngine } from './expose.ts';

// This bundle's own Dexie: its debug mode (on by default for localhost pages) only slows the engine down.
Dexie.debug = false;
exposeSyncEngine();
