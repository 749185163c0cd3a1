// The Open Podcast API behind the transport seam.
import type { Clock, DeletionStatus } from '../../src/types.ts';
import type { Http } from '../http.ts';
import type { Transport } from '../transport.ts';
import { pullOpa } from './pull.ts';
import { planOpa, sendOpa } from './send.ts';
import { harmless } from '../store/delivery.ts';
import { parseDeletion } from './wire.ts';

/** ms of server time re-fetched before the cursor (second-precision servers, commit-order gaps). */
const PULL_OVERLAP = 2000;
/** Entries re-read at least before the cursor when they are denser than the time overlap. */
const OVERLAP_ENTRIES = 100;
const MAX_DRAINS = 3;

/** Create the OPA transport over the engine's HTTP layer. */
export function createOpaTransport(http: Http, clock: Clock, pageSize: number): Transport {
  return {
    protocol: 'opa',
    batching: 'each',
    guidChanges: true,
    pull: (sink) => pullOpa({ http, clock, pageSize, overlap: PULL_OVERLAP, overlapEntries: OVERLAP_ENTRIES, maxDrains: MAX_DRAINS }, sink),
    plan: planOpa,
    // A PATCH of values or a DELETE: a POST or a guid change is never in the copy (see `planOpa`).
    copies: harmless,
    send: (request) => sendOpa(http, request),
    async deletion(id: number): Promise<DeletionStatus> {
      const status = parseDeletion((await http.request('GET', http.url(`deletions/${id}`))).body);
      return { deletionId: status.deletion_id, status: status.status, ...(status.message !== undefined && { message: status.message }) };
    },
  };
}
