// The test app's service worker: opa-sync/sw answering the Background Sync tag. The token is the app's to give
// (a real app reads it from wherever it keeps it); the library stores it nowhere.
import { serveBackgroundSync } from '../../../worker/sw.ts';

serveBackgroundSync({ auth: () => ({ type: 'bearer', token: 'demo-token' }) });
