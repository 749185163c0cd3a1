// The test app's real service worker in Chromium, driven over CDP: register it, close every page but a blank
// one (it keeps the browser context and the CDP session alive), fire its Background Sync event, stop it; and
// everything the origin stores, read back as text.
import type { CDPSession } from 'playwright-core';
import { playwrightPage } from '../../support/drivers/chromium.ts';
import type { BrowserContext, BrowserPage } from './harness.ts';

/** The app's service worker (pages/background-sw.ts) registered for the whole origin, and active. */
export async function registerAppServiceWorker(page: BrowserPage): Promise<void> {
  await page.evaluate(async () => {
    await navigator.serviceWorker.register('/background-sw.ts', { type: 'module', scope: '/' });
    await navigator.serviceWorker.ready;
  });
}

/** What CDP reports about the service worker (`ServiceWorker.workerVersionUpdated`). */
export interface WorkerVersion {
  versionId: string;
  scriptURL: string;
  runningStatus: string;
}

/** A blank tab of the context and its CDP session on the service worker of `pagesUrl`'s scope. */
export interface ServiceWorkerControl {
  blank: BrowserPage;
  /** The registration's scope URL, as CDP reports it. */
  scopeURL: string;
  /** Every version CDP reported, latest state of each. */
  versions(): WorkerVersion[];
  /** How many times a running version was reported stopped. */
  stops(): number;
  /** Fire the library's sync event, as Chromium does when the network returns. */
  fireSync(lastChance?: boolean): Promise<void>;
  /** Stop the service worker at once (what the browser does to an idle or overrunning one). */
  stop(): Promise<void>;
  /** The requests a service worker of the context sent since this control was made. */
  sent(): SentRequest[];
  /** The addresses of the context's open pages. */
  pages(): string[];
}

/** A request as it left. */
export interface SentRequest {
  method: string;
  url: string;
}

/** Open a blank tab in `context` and watch the service worker registered for `pagesUrl` over CDP. */
export async function controlServiceWorker(context: BrowserContext, pagesUrl: string): Promise<ServiceWorkerControl> {
  const blank = await context.newPage();
  const native = playwrightPage(blank);
  if (!native) throw new Error('a service worker is driven over CDP: Chromium only');
  const session: CDPSession = await native.context().newCDPSession(native);
  const versions = new Map<string, WorkerVersion>();
  const sent: SentRequest[] = [];
  // Playwright reports a service worker's requests on the context (Chromium), each with its sender. Counted as
  // they leave: a cross-origin POST after its preflight is reported failed (net::ERR_ABORTED) though answered.
  native.context().on('request', (request) => {
    if (request.serviceWorker()) sent.push({ method: request.method(), url: request.url() });
  });
  let stops = 0;
  session.on('ServiceWorker.workerVersionUpdated', ({ versions: updated }) => {
    for (const v of updated) {
      if (v.runningStatus === 'stopped' && versions.get(v.versionId)?.runningStatus !== 'stopped') stops++;
      versions.set(v.versionId, { versionId: v.versionId, scriptURL: v.scriptURL, runningStatus: v.runningStatus });
    }
  });
  const registration = new Promise<{ registrationId: string; scopeURL: string }>((resolve) => {
    session.on('ServiceWorker.workerRegistrationUpdated', ({ registrations }) => {
      const ours = registrations.find((r) => r.scopeURL === pagesUrl && !r.isDeleted);
      if (ours) resolve(ours);
    });
  });
  await session.send('ServiceWorker.enable');
  const { registrationId, scopeURL } = await registration;
  const origin = new URL(pagesUrl).origin;
  return {
    blank,
    scopeURL,
    versions: () => [...versions.values()],
    stops: () => stops,
    fireSync: async (lastChance = false) => void (await session.send('ServiceWorker.dispatchSyncEvent', { origin, registrationId, tag: 'opa-sync', lastChance })),
    stop: async () => void (await session.send('ServiceWorker.stopAllWorkers')),
    sent: () => [...sent],
    pages: () => native.context().pages().map((p) => p.url()),
  };
}

/** Every IndexedDB database (each object store's keys and records) and Cache Storage entry of the page's origin, as text. */
export async function everythingStored(page: BrowserPage): Promise<string> {
  return page.evaluate(async () => {
    const out: Record<string, unknown> = {};
    for (const { name } of await indexedDB.databases()) {
      const db = await new Promise<IDBDatabase>((resolve, reject) => {
        const r = indexedDB.open(name!);
        r.onsuccess = () => resolve(r.result);
        r.onerror = () => reject(r.error);
      });
      for (const store of db.objectStoreNames) {
        for (const read of ['getAllKeys', 'getAll'] as const) {
          out[`idb:${name}/${store}:${read}`] = await new Promise((resolve, reject) => {
            const r = db.transaction(store).objectStore(store)[read]();
            r.onsuccess = () => resolve(r.result);
            r.onerror = () => reject(r.error);
          });
        }
      }
      db.close();
    }
    for (const key of await caches.keys()) {
      const cache = await caches.open(key);
      for (const request of await cache.keys()) {
        out[`cache:${key}:${request.url}`] = { headers: [...request.headers], body: await (await cache.match(request))!.text() };
      }
    }
    return JSON.stringify(out);
  });
}
