// The test app's service worker: opa-sync/sw answering the Background Sync tag. The credentials are the app's to
// give (a real app reads them from wherever it keeps them); the library stores them nowhere. The OPA reference
// server takes a bearer token, the gPodder one (behind this origin) a username and password.
import { serveBackgroundSync } from '../../../worker/sw.ts';

serveBackgroundSync({
  // A store whose page sent none (a gPodder session: the browser's cookie) gets none from here either.
  auth: (store) => (!store.authed ? undefined : store.protocol === 'opa' ? { type: 'bearer', token: 'demo-token' } : { type: 'basic', username: 'alice', password: 'alice-password' }),
});
