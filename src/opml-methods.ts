// The page client's OPML methods, a chunk the client fetches as it starts (the page entry carries none of it):
// the page's own XML parser reads the file, the engine adds what it names in one transaction.
import { readOpml, writeOpml } from './opml.ts';
import type { AddManyReport, ExportOpmlOptions, SyncApi } from './types.ts';

/** `importOpml`: the feeds an OPML document names, added with `addMany`; both steps' skipped entries in one list. */
export async function importOpml(api: Pick<SyncApi, 'addMany'>, text: string): Promise<AddManyReport> {
  const { feeds, skipped } = readOpml(text);
  const report = await api.addMany(feeds);
  return { ...report, skipped: [...skipped, ...report.skipped] };
}

/** `exportOpml`: the subscribed feeds as an OPML 2.0 document, titled as the app says. */
export async function exportOpml(api: Pick<SyncApi, 'subscriptions'>, opts: ExportOpmlOptions = {}): Promise<string> {
  const { titles } = opts;
  const feeds = (await api.subscriptions({ subscribed: true })).map(({ feedUrl }) => {
    const title = typeof titles === 'function' ? titles(feedUrl) : titles && Object.hasOwn(titles, feedUrl) ? titles[feedUrl] : undefined;
    return title === undefined ? { feedUrl } : { feedUrl, title };
  });
  return writeOpml(feeds, opts);
}
