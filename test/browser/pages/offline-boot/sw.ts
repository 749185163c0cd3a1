// The app's service worker, as docs/service-worker.md ("Booting offline") shows it by hand: on install it caches the built
// files (their list injected by the build, as Workbox's injectManifest does), the library's worker file among
// them, and serves them cache-first; everything else (the API) goes to the network. `?leave=worker` leaves the
// worker file out of the cache: the test's check that an offline boot needs it.
import { serveBackgroundSync } from '../../../../worker/sw.ts';

declare const self: ServiceWorkerGlobalScope;
declare const __SHELL_FILES__: string[];

const SHELL = 'shell-v1';
const leave = new URL(location.href).searchParams.get('leave');
const FILES = __SHELL_FILES__.filter((file) => !(leave === 'worker' && /opa-sync-worker/.test(file)));

self.addEventListener('install', (e) => e.waitUntil(caches.open(SHELL).then((c) => c.addAll(FILES))));
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));
self.addEventListener('fetch', (e) => {
  if (e.request.method !== 'GET' || new URL(e.request.url).origin !== location.origin) return;
  e.respondWith(caches.match(e.request, { ignoreSearch: true, ignoreVary: true }).then((hit) => hit ?? fetch(e.request)));
});
serveBackgroundSync({ auth: () => ({ type: 'bearer', token: 'demo-token' }) });
