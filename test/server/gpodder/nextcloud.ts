// The Nextcloud gPodder Sync endpoints, under `/index.php/apps/gpoddersync`: one list per user, Basic only.
import type { Account } from './accounts.ts';
import type { GpodderRequest, RouteContext } from './api2.ts';
import { pullNextcloudEpisodes, uploadNextcloudEpisodes } from './episodes-nextcloud.ts';
import { pullOpodsyncEpisodes, uploadOpodsyncEpisodes } from './episodes-opodsync.ts';
import type { SubscriptionList } from './list.ts';
import { nextcloudSince, opodsyncSince } from './since.ts';
import type { WireChanges } from './types.ts';
import { uploadNextcloudApp, uploadOpodsync } from './upload.ts';
import { nextcloudVoice, opodsyncVoice } from './voice.ts';
import { parseJson, type Reply } from '../http.ts';

/** Where the app's routes live. */
export const NEXTCLOUD_BASE = '/index.php/apps/gpoddersync';

/**
 * Create the Nextcloud handler; answers undefined for paths outside it. Under opodsync both routes
 * lead to its `/api/2` subscription handler (so either serves GET and POST, and answers carry
 * `update_urls`); under the app, `since` is exclusive and defaults to a week ago.
 */
export function createNextcloud(ctx: RouteContext): (req: GpodderRequest) => Reply | undefined {
  const app = ctx.dialect === 'mygpo';
  const voice = app ? nextcloudVoice : opodsyncVoice;
  const seconds = (): number => Math.floor(ctx.now() / 1000);

  const pull = (req: GpodderRequest, list: SubscriptionList): Reply => {
    if (app) {
      const since = nextcloudSince(req.query.get('since'), seconds());
      return voice.ok({ ...list.rowsChangedIn((s) => s > since), timestamp: seconds() } satisfies WireChanges);
    }
    const since = opodsyncSince(req.query.get('since'));
    return voice.ok({ ...list.rowsChangedIn((s) => s >= since), update_urls: [], timestamp: seconds() } satisfies WireChanges);
  };

  const push = (req: GpodderRequest, list: SubscriptionList): Reply => {
    const parsed = parseJson(req.body);
    if (!parsed) return voice.error(400, app ? 'Invalid JSON body' : 'Malformed JSON: Syntax error');
    const outcome = app ? uploadNextcloudApp(parsed.value, list, ctx.now()) : uploadOpodsync(parsed.value, list, ctx.now());
    return outcome.ok ? voice.ok(outcome.result) : voice.error(400, outcome.message);
  };

  // opodsync maps both episode routes to its `/api/2` episodes handler (GET or POST on either).
  const episodes = (req: GpodderRequest, account: Account, route: string): Reply => {
    if (app) {
      if (route === 'episode_action' && req.method === 'GET') return voice.ok(pullNextcloudEpisodes(account, req.query.get('since'), ctx.now()));
      if (route === 'episode_action/create' && req.method === 'POST') {
        // Nextcloud hands the controller the decoded body's numeric keys; a body it cannot decode is no keys.
        const outcome = uploadNextcloudEpisodes(account, parseJson(req.body)?.value, ctx.now());
        return outcome.ok ? voice.ok(outcome.result) : voice.crash(outcome.message);
      }
      return voice.error(405, 'Method Not Allowed');
    }
    if (req.method === 'GET') return voice.ok(pullOpodsyncEpisodes(account, req.query.get('since'), ctx.now()));
    if (req.method !== 'POST') return voice.error(405, `Invalid HTTP method: ${req.method}`);
    const parsed = parseJson(req.body);
    if (!parsed) return voice.error(400, 'Malformed JSON: Syntax error');
    const outcome = uploadOpodsyncEpisodes(account, parsed.value, ctx.now());
    if (outcome.ok) return voice.ok(outcome.result);
    return outcome.status === 500 ? voice.crash(outcome.message) : voice.error(outcome.status, outcome.message);
  };

  return (req) => {
    if (req.path !== NEXTCLOUD_BASE && !req.path.startsWith(`${NEXTCLOUD_BASE}/`)) return undefined;
    const caller = ctx.auth.identify(req.authorization, undefined, false);
    if (!caller.ok) return voice.unauthorized(caller.message);
    const route = req.path.slice(NEXTCLOUD_BASE.length + 1).replace(/\/+$/, '');
    if (route === 'episode_action' || route === 'episode_action/create') return episodes(req, caller.account, route);
    if (route !== 'subscriptions' && route !== 'subscription_change/create') {
      return voice.error(404, app ? 'Not Found' : 'Undefined Nextcloud API endpoint');
    }
    const list = caller.account.list;
    if (app) {
      if (route === 'subscriptions' && req.method === 'GET') return pull(req, list);
      if (route === 'subscription_change/create' && req.method === 'POST') return push(req, list);
      return voice.error(405, 'Method Not Allowed');
    }
    if (req.method === 'GET') return pull(req, list);
    if (req.method === 'POST') return push(req, list);
    return voice.error(501, 'Not implemented yet');
  };
}
