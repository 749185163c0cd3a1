// The registry of stores the service worker pushes for keeps its format: one written by an earlier version (raw
// IndexedDB, version 1) is read as it is, and a new entry joins it.
import { describe, expect, it } from 'vitest';
import { knownStores, rememberStore, type KnownStore } from '../../worker/sw-registry.ts';

const earlier: KnownStore = { dbName: 'earlier-store', baseUrl: 'https://a.example/v1', protocol: 'opa', device: 'opa-sync', authed: true };

describe('the service worker registry', () => {
  it('reads a registry an earlier version wrote, and adds to it', async () => {
    await new Promise((resolve) => {
      const r = indexedDB.deleteDatabase('opa-sync-background');
      r.onsuccess = r.onerror = resolve;
    });
    await new Promise<void>((resolve, reject) => {
      const request = indexedDB.open('opa-sync-background', 1);
      request.onupgradeneeded = () => void request.result.createObjectStore('stores', { keyPath: 'dbName' }).put(earlier);
      request.onsuccess = () => (request.result.close(), resolve());
      request.onerror = () => reject(request.error);
    });
    expect(await knownStores()).toEqual([earlier]);
    await rememberStore({ ...earlier, dbName: 'later-store', authed: false });
    expect((await knownStores()).map((s) => [s.dbName, s.authed])).toEqual([['earlier-store', true], ['later-store', false]]);
  });
});
