// The node layer runs the engine on fake-indexeddb (the fast layer; real IndexedDB is the browser suite's).
import 'fake-indexeddb/auto';
