import { bool, createAdminDispatch, need, num, sharedRoutes, str, BadInput, type AdminRoute } from './admin-input.ts';
import { ForeignError } from './foreign.ts';
import type { Reply } from './http.ts';
import type { ForeignPatch, RefServer } from './types.ts';

/** What the admin route may drive: the server's controls without its lifecycle. */
export type Control = Omit<RefServer, 'url' | 'origin' | 'port' | 'close'>;

/** Create the `/__admin/...` handler: no token, not logged, never faulted. */
export function createAdmin(control: Control): (method: string, path: string, text: string) => Reply {
  const routes: Record<string, AdminRoute> = {
    'POST /reset': () => control.reset(),
    'POST /seed': (b) => ({ seeded: control.seed(num(b, 'n')).length }),
    'GET /state': () => control.state(),
    'GET /entry': (_b, guid) => {
      const view = control.entry(guid);
      if (!view) throw new ForeignError(404, 'Resource not found');
      return view;
    },
    ...sharedRoutes(control),
    'POST /reorder': (b) => control.reorder(num(b, 'count', 1)),
    'POST /deletion-outcome': (b) => {
      const outcome = b.outcome;
      if (outcome !== 'success' && outcome !== 'failure') throw new BadInput("outcome must be 'success' or 'failure'");
      control.deletionOutcome(outcome, b.count === undefined ? undefined : num(b, 'count'));
    },
    'POST /deletion-delay': (b) => control.setDeletionDelay(num(b, 'ms')),
    'POST /error-code-as-string': (b) => control.errorCodeAsString(need(bool(b, 'on'), 'on must be a boolean')),
    'POST /foreign': (b) => {
      const guid = str(b, 'guid');
      if (b.op === 'add') return control.foreign.add(need(str(b, 'feed_url'), 'feed_url is required'), guid);
      if (b.op === 'patch') return control.foreign.patch(need(guid, 'guid is required'), need(b.body, 'body is required') as ForeignPatch);
      if (b.op === 'remove') return control.foreign.remove(need(guid, 'guid is required'));
      throw new BadInput("op must be 'add', 'patch' or 'remove'");
    },
  };
  return createAdminDispatch(routes, (err): err is ForeignError => err instanceof ForeignError);
}
