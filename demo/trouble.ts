// "Simulate trouble": drive the local reference server's /__admin routes (shown only when it answers).
import type { GpodderRowView } from '../test/server/gpodder/types.ts';
import type { ServerEntryView } from '../test/server/types.ts';
import { findAdmin, type Admin } from './admin.ts';
import { byId } from './dom.ts';
import type { Log } from './log.ts';
import type { Session } from './session.ts';
import { syncNow } from './sync.ts';

/** Effectively "every request from now on". */
const FOREVER = 1_000_000;

export function createTroublePanel(session: Session, log: Log): void {
  const panel = byId('trouble');
  const origin = byId('trouble-origin');
  const offline = byId<HTMLInputElement>('offline-toggle');
  const failForm = byId<HTMLFormElement>('fail-form');
  const failCount = byId<HTMLInputElement>('fail-count');
  const failStatus = byId<HTMLSelectElement>('fail-status');
  const failMethod = byId<HTMLSelectElement>('fail-method');
  const retryAfter = byId<HTMLInputElement>('fail-retry-after');
  const latencyForm = byId<HTMLFormElement>('latency-form');
  const latency = byId<HTMLInputElement>('latency-ms');
  const jobsForm = byId<HTMLFormElement>('jobs-form');
  const jobsDelay = byId<HTMLInputElement>('jobs-delay');
  const jobsOutcome = byId<HTMLSelectElement>('jobs-outcome');
  const pullAfter = byId<HTMLInputElement>('foreign-pull');
  let admin: Admin | undefined;

  /** Run one admin step; log its outcome (an admin failure is the server's, not the library's). */
  async function step(what: string, fn: (a: Admin) => Promise<unknown>): Promise<boolean> {
    if (!admin) return false;
    try {
      await fn(admin);
      log.add('server', what);
      return true;
    } catch (error) {
      log.add('error', `server control failed (${what}): ${error instanceof Error ? error.message : String(error)}`);
      return false;
    }
  }

  offline.addEventListener('change', async () => {
    if (offline.checked) {
      const cut = await step('unreachable: the server now cuts every request mid-answer (the engine sees a network error, as offline)', (a) =>
        a.post('drop', { count: FOREVER }),
      );
      // The engine only learns at its next request; make one now so the status shows it.
      if (cut) await syncNow(session, log, 'sync while unreachable');
    } else if (await step('reachable again: every queued fault cleared', (a) => a.post('clear-faults'))) {
      // The engine would notice at its next retry (backoff); ask now.
      await syncNow(session, log, 'sync after reconnecting');
    }
  });

  const syncRetryAfter = (): void => {
    retryAfter.disabled = !['429', '503'].includes(failStatus.value);
  };
  failStatus.addEventListener('change', syncRetryAfter);
  syncRetryAfter();

  failForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    const count = Math.max(1, Number(failCount.value) || 1);
    const status = Number(failStatus.value);
    const body: Record<string, unknown> = { count, status };
    if (failMethod.value) body.method = failMethod.value;
    if (!retryAfter.disabled && retryAfter.value !== '') body.retryAfter = Number(retryAfter.value);
    const which = `${count} ${failMethod.value ? `${failMethod.value} ` : ''}request${count === 1 ? '' : 's'}`;
    const wait = body.retryAfter === undefined ? '' : ` (Retry-After: ${String(body.retryAfter)} s)`;
    await step(`the next ${which} will get ${status}${wait}`, (a) => a.post('fail', body));
  });

  latencyForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    const ms = Math.max(0, Number(latency.value) || 0);
    await step(ms ? `every answer now waits ${ms} ms` : 'no added latency', (a) => a.post('latency', { ms }));
  });

  jobsForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    const ms = Math.max(0, Number(jobsDelay.value) || 0);
    const outcome = jobsOutcome.value;
    await step(`new deletion jobs stay PENDING ${ms} ms, then end in ${outcome.toUpperCase()}`, async (a) => {
      await a.post('deletion-delay', { ms });
      await a.post('deletion-outcome', { outcome });
    });
  });

  /** A random live subscription on the server. */
  async function pick(a: Admin): Promise<ServerEntryView> {
    const live = (await a.state()).filter((e) => !e.deleted);
    if (!live.length) throw new Error('the server has no live subscriptions');
    return live[Math.floor(Math.random() * live.length)]!;
  }

  /** A change made on the server as if by another device; then, when asked, a pull to see it arrive. */
  async function foreign(act: (a: Admin) => Promise<string>): Promise<void> {
    if (!admin) return;
    try {
      log.add('server', `another device ${await act(admin)}`);
    } catch (error) {
      log.add('error', `server control failed (another device): ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    if (pullAfter.checked) await syncNow(session, log, 'pull after the other device');
  }

  const onClick = (id: string, fn: () => Promise<void>): void => {
    const button = byId<HTMLButtonElement>(id);
    button.addEventListener('click', async () => {
      button.disabled = true;
      await fn().finally(() => (button.disabled = false));
    });
  };
  // The gPodder server's other device uploads add/remove lists (it has no guids, and no rename: a client whose
  // feed moved removes the old URL and adds the new one); the OPA server's edits entries by guid.
  const gpodder = (): boolean => (session.connection?.settings.protocol ?? 'opa') !== 'opa';
  async function pickUrl(a: Admin): Promise<GpodderRowView> {
    const rows = (await a.get('state')) as GpodderRowView[];
    if (!rows.length) throw new Error('the server has no subscriptions');
    return rows[Math.floor(Math.random() * rows.length)]!;
  }
  const upload = (a: Admin, change: { add?: string[]; remove?: string[] }) => a.post('foreign', { add: change.add ?? [], remove: change.remove ?? [] });
  const movedUrl = (feedUrl: string): string => {
    const url = new URL(feedUrl);
    url.hostname = `moved-${Math.floor(Math.random() * 1000)}.${url.hostname.replace(/^moved-\d+\./, '')}`;
    return url.href;
  };

  onClick('foreign-toggle', () =>
    foreign(async (a) => {
      if (gpodder()) {
        const row = await pickUrl(a);
        await upload(a, row.subscribed ? { remove: [row.url] } : { add: [row.url] });
        return `${row.subscribed ? 'unsubscribed from' : 'subscribed to'} ${row.url}`;
      }
      const e = await pick(a);
      await a.post('foreign', { op: 'patch', guid: e.guid, body: { is_subscribed: !e.is_subscribed } });
      return `${e.is_subscribed ? 'unsubscribed from' : 'subscribed to'} ${e.feed_url} (${e.guid})`;
    }),
  );
  onClick('foreign-feed', () =>
    foreign(async (a) => {
      if (gpodder()) {
        const row = await pickUrl(a);
        const to = movedUrl(row.url);
        await upload(a, { add: [to], remove: [row.url] });
        return `moved ${row.url} to ${to} (gPodder has no rename: removed the old URL, added the new one)`;
      }
      const e = await pick(a);
      const to = movedUrl(e.feed_url);
      await a.post('foreign', { op: 'patch', guid: e.guid, body: { new_feed_url: to } });
      return `moved ${e.guid} to ${to}`;
    }),
  );
  onClick('foreign-add', () =>
    foreign(async (a) => {
      const feedUrl = `https://another-device-${Math.floor(Math.random() * 100_000)}.example/feed.xml`;
      if (gpodder()) {
        await upload(a, { add: [feedUrl] });
        return `subscribed to ${feedUrl}`;
      }
      const e = (await a.post('foreign', { op: 'add', feed_url: feedUrl })) as ServerEntryView;
      return `subscribed to ${feedUrl} (${e.guid})`;
    }),
  );
  onClick('foreign-delete', () =>
    foreign(async (a) => {
      if (gpodder()) {
        const row = await pickUrl(a);
        await upload(a, { remove: [row.url] });
        return `unsubscribed from ${row.url} (gPodder has no deletion: an unsubscribe)`;
      }
      const e = await pick(a);
      await a.post('foreign', { op: 'remove', guid: e.guid });
      return `deleted ${e.feed_url} (${e.guid})`;
    }),
  );
  onClick('reset-server', async () => {
    if (!(await step('reset to its seeded start state (new guids; faults, latency and log cleared)', (a) => a.post('reset')))) return;
    offline.checked = false;
    latency.value = '0';
    const client = session.connection?.client;
    if (!client) return;
    try {
      await client.clear();
      log.add('action', 'local data cleared to match the reset server');
    } catch (error) {
      log.error('clearing local data', error);
    }
    await syncNow(session, log, 'pull after the reset');
  });

  session.on(async (event) => {
    if (event.type === 'disconnected') {
      admin = undefined;
      panel.hidden = true;
    }
    if (event.type !== 'connected') return;
    const found = await findAdmin(event.connection.settings.baseUrl);
    if (session.connection !== event.connection) return;
    admin = found;
    panel.hidden = !found;
    if (found) origin.textContent = `${found.origin}/__admin`;
  });
}
