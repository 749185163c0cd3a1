// The Open Podcast API behind the transport seam.
import type { Clock, DeletionStatus } from '../../src/types.ts';
import type { Http } from '../http.ts';
import type { Transport } from '../transport.ts';
import { pullOpa } from './pull.ts';
import { lastChanceOpa, sendOpa } from './send.ts';
import { parseDeletion } from './wire.ts';

/** ms of server time re-fetched before the cursor (second-precision servers, commit-order gaps). */
const PULL_OVERLAP = 2000;
/** Entries re-read at least before the cursor when they are denser than the time overlap. */
const OVERLAP_ENTRIES = 100;
const MAX_DRAINS = 3;
/** Adds one POST carries: 1,000 feeds imported offline reach the server in 10 requests, each body about 10 KB. */
const ADDS_PER_REQUEST = 100;

/** Create the OPA transport over the engine's HTTP layer. */
export function createOpaTransport(http: Http, clock: Clock, pageSize: number): Transport {
  return {
    protocol: 'opa',
    batching: 'each',
    addsPerRequest: ADDS_PER_REQUEST,
    guidChanges: true,
    pull: (sink) => pullOpa({ http, clock, pageSize, overlap: PULL_OVERLAP, overlapEntries: OVERLAP_ENTRIES, maxDrains: MAX_DRAINS }, sink),
    send: (items) => sendOpa(http, items),
    lastChance: lastChanceOpa,
    async deletion(id: number): Promise<DeletionStatus> {
      const status = parseDeletion((await http.request('GET', http.url(`deletions/${id}`))).body);
      const result: DeletionStatus = { deletionId: status.deletion_id, status: status.status };
      if (status.message !== undefined) result.message = status.message;
      return result;
    },
  };
}
