// `sync()` on demand, with its report (or its error's code) in the log.
import type { SyncReport } from '../src/index.ts';
import type { Log } from './log.ts';
import type { Session } from './session.ts';

/** Run `sync()` now; resolves with the report, or undefined after logging the error. */
export async function syncNow(session: Session, log: Log, why = 'sync'): Promise<SyncReport | undefined> {
  const client = session.connection?.client;
  if (!client) return undefined;
  try {
    const r = await client.sync();
    const episodes = r.episodesPushed ? ` · ${r.episodesPushed} episode change${r.episodesPushed === 1 ? '' : 's'} pushed` : '';
    log.add('sync', `${why}: pulled ${r.pulled} · pushed ${r.pushed} · failed ${r.failed} · pending ${r.pending}${episodes} · ${r.requests} request${r.requests === 1 ? '' : 's'}`);
    return r;
  } catch (error) {
    log.error(why, error);
    return undefined;
  }
}
