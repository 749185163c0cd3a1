// A transport's whole push for some items, as the outbox makes it: its plan, each request sent in turn.
import type { SendItem, SendOutcome, Transport } from '../../worker/transport.ts';

/** Plan `items` and send every request in order: an outcome per item, in the items' order. */
export async function sendAll(t: Pick<Transport, 'plan' | 'send'>, items: readonly SendItem[]): Promise<SendOutcome[]> {
  const outcomes = new Map<SendItem['change'], SendOutcome>();
  for (const request of t.plan(items)) {
    const answers = 'outcome' in request ? request.items.map(() => request.outcome) : await t.send(request);
    request.items.forEach((item, i) => outcomes.set(item.change, answers[i]!));
  }
  return items.map((item) => outcomes.get(item.change)!);
}
