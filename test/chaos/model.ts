// The intent log: every change the app was told is durable and every change another device made, in the
// order they happened, per subscription and field. From it, the final server value each field may hold:
//
//   Let L be the app's last write to a field. The engine sends L after the call resolved, so L lands after
//   every foreign write that came before it; foreign writes after L race with L's delivery. The final value
//   is therefore L, or the last foreign write made after L. With no local write: the last write made.
//
// A subscription whose change the app discarded from failed() is "excused": only the weak property holds
// (the final value is one that was written).
import type { PendingChange, SubscriptionChange } from '../../src/types.ts';
import type { ServerEntryView } from '../server/types.ts';

export type Field = 'feedUrl' | 'isSubscribed' | 'deleted' | 'guid';
export type Value = string | boolean;
export type Author = 'initial' | 'local' | 'foreign';

/** One write to one field. */
export interface Write {
  field: Field;
  value: Value;
  by: Author;
  /** Logical time (order of the script's steps). */
  at: number;
  /** A local write that folded the row's queued change back to the engine's base: nothing of it is sent. */
  foldedBack?: boolean;
  /** The call was cut off by a crash: the change may or may not have become durable. */
  maybe?: boolean;
  /**
   * A local write the server is known to have applied at this point though the engine never got the answer (a
   * lost answer), for a change not harmless to repeat (an add): it may go again only after the server's word,
   * so another device's write after it is the later one, and wins.
   */
  landed?: boolean;
}

/** One subscription as the intents describe it. */
export interface ModelSub {
  id: number;
  origin: 'server' | 'local' | 'foreign';
  /** Guids the app or the other device knew it by, oldest first (a local add's placeholder included). */
  handles: string[];
  /** Whether handles[0] is a guid the server itself assigned or was given (false: a local placeholder). */
  serverNamed: boolean;
  writes: Write[];
  /** A change to it was discarded: only the weak property is checked. */
  excused: boolean;
  /** Created by an add() cut off by a crash: it may not exist at all. */
  maybe: boolean;
  /** Its first feed URL, for messages. */
  label: string;
}

/**
 * The values LWW by order of arrival allows: the last local write, or the last foreign write after it. A local
 * write that folded back to the engine's base sends nothing: the server keeps what it has, which is that base or
 * any foreign write the engine had not pulled yet.
 */
function lastWriterWins(writes: readonly Write[]): Value[] {
  const local = writes.filter((w) => w.by === 'local');
  const last = local[local.length - 1];
  if (!last) return [writes[writes.length - 1]!.value];
  if (last.foldedBack) return [...new Set([last.value, ...writes.filter((w) => w.by === 'foreign').map((w) => w.value)])];
  const later = writes.filter((w) => w.by === 'foreign' && w.at > last.at);
  if (last.landed && later.length) return [later[later.length - 1]!.value];
  return later.length ? [...new Set([last.value, later[later.length - 1]!.value])] : [last.value];
}

/** The intent log. */
export class Model {
  readonly subs: ModelSub[] = [];
  private time = 0;
  private nextId = 0;

  /** A new logical time. */
  tick(): number {
    return ++this.time;
  }

  private create(origin: ModelSub['origin'], handles: string[], serverNamed: boolean, label: string): ModelSub {
    const sub: ModelSub = { id: this.nextId++, origin, handles, serverNamed, writes: [], excused: false, maybe: false, label };
    this.subs.push(sub);
    return sub;
  }

  private write(sub: ModelSub, by: Author, at: number, values: Partial<Record<Field, Value>>, maybe = false): void {
    for (const [field, value] of Object.entries(values) as [Field, Value][]) {
      if (value === undefined) continue;
      sub.writes.push(maybe ? { field, value, by, at, maybe } : { field, value, by, at });
      if (field === 'guid' && !sub.handles.includes(value as string)) sub.handles.push(value as string);
    }
  }

  /** Subscriptions the server held when the scenario began. */
  fromServer(view: ServerEntryView): ModelSub {
    const sub = this.create('server', [view.guid, ...view.old_guids], true, view.feed_url);
    this.write(sub, 'initial', 0, { feedUrl: view.feed_url, isSubscribed: view.is_subscribed, deleted: view.deleted !== undefined, guid: view.guid });
    return sub;
  }

  /** The app's add() resolved with `view` (the placeholder or given guid). */
  localAdd(feedUrl: string, guid: string | undefined, viewGuid: string, maybe = false): ModelSub {
    const sub = this.create('local', [guid ?? viewGuid], guid !== undefined, feedUrl);
    sub.maybe = maybe;
    this.write(sub, 'local', this.tick(), { feedUrl, isSubscribed: true, deleted: false, ...(guid !== undefined ? { guid } : {}) }, maybe);
    return sub;
  }

  /** The app's update() resolved (or, `maybe`, was cut off by a crash). */
  localUpdate(sub: ModelSub, change: SubscriptionChange, maybe = false): void {
    this.write(sub, 'local', this.tick(), { feedUrl: change.feedUrl, isSubscribed: change.isSubscribed, guid: change.guid } as Partial<Record<Field, Value>>, maybe);
  }

  /** The app's last update() folded these fields back to the engine's base (its queued change left the queue). */
  foldedBack(sub: ModelSub, fields: readonly Field[]): void {
    for (const field of fields) {
      const last = [...sub.writes].reverse().find((w) => w.field === field && w.by === 'local');
      if (last) last.foldedBack = true;
    }
  }

  /** The server applied the subscription's last local writes (an add's), and their answer was lost (see `Write.landed`). */
  landed(sub: ModelSub): void {
    const seen = new Set<Field>();
    for (const w of [...sub.writes].reverse()) {
      if (w.by !== 'local' || seen.has(w.field)) continue;
      seen.add(w.field);
      w.landed = true;
    }
  }

  /** The app's remove() resolved (or, `maybe`, was cut off by a crash). */
  localRemove(sub: ModelSub, maybe = false): void {
    this.write(sub, 'local', this.tick(), { deleted: true }, maybe);
  }

  /** Another device added a subscription. */
  foreignAdd(view: ServerEntryView): ModelSub {
    const sub = this.create('foreign', [view.guid], true, view.feed_url);
    this.write(sub, 'foreign', this.tick(), { feedUrl: view.feed_url, isSubscribed: view.is_subscribed, deleted: false, guid: view.guid });
    return sub;
  }

  /** Another device changed a subscription (the server accepted it). */
  foreignPatch(sub: ModelSub, body: { new_feed_url?: string; new_guid?: string; is_subscribed?: boolean }): void {
    this.write(sub, 'foreign', this.tick(), { feedUrl: body.new_feed_url, isSubscribed: body.is_subscribed, guid: body.new_guid } as Partial<Record<Field, Value>>);
  }

  /** Another device deleted a subscription. */
  foreignRemove(sub: ModelSub): void {
    this.write(sub, 'foreign', this.tick(), { deleted: true });
  }

  /** The app re-queued a refused change: a new write of what it carries, now. */
  retried(sub: ModelSub, change: PendingChange): void {
    const at = this.tick();
    if (change.kind === 'add') this.write(sub, 'local', at, { feedUrl: change.feedUrl, isSubscribed: true, deleted: false });
    if (change.kind === 'update' && change.change) this.localUpdateAt(sub, change.change, at);
    if (change.kind === 'remove') this.write(sub, 'local', at, { deleted: true });
  }

  private localUpdateAt(sub: ModelSub, change: SubscriptionChange, at: number): void {
    this.write(sub, 'local', at, { feedUrl: change.feedUrl, isSubscribed: change.isSubscribed, guid: change.guid } as Partial<Record<Field, Value>>);
  }

  /** The app discarded a refused change of this subscription. */
  excuse(sub: ModelSub): void {
    sub.excused = true;
  }

  /** The subscription a guid names, if any. */
  byHandle(guid: string): ModelSub | undefined {
    return this.subs.find((s) => s.handles.includes(guid));
  }

  /** The values a field may end with on the server (undefined: nothing was ever written to it). */
  allowed(sub: ModelSub, field: Field): Value[] | undefined {
    const writes = sub.writes.filter((w) => w.field === field);
    if (!writes.length) return undefined;
    if (sub.excused) return [...new Set(writes.map((w) => w.value))];
    // A write cut off by a crash may or may not count: allow what either history gives.
    const sure = writes.filter((w) => !w.maybe);
    const values = new Set(lastWriterWins(writes));
    if (sure.length && sure.length !== writes.length) for (const v of lastWriterWins(sure)) values.add(v);
    return [...values];
  }

  /** Whether the intents say the subscription may, or must, end deleted. */
  mayBeDeleted(sub: ModelSub): boolean {
    return (this.allowed(sub, 'deleted') ?? [false]).includes(true);
  }
  mustBeDeleted(sub: ModelSub): boolean {
    const allowed = this.allowed(sub, 'deleted') ?? [false];
    return allowed.length === 1 && allowed[0] === true;
  }

  /** The last value written to a field (what the generator believes now). */
  current(sub: ModelSub, field: Field): Value | undefined {
    const writes = sub.writes.filter((w) => w.field === field);
    return writes[writes.length - 1]?.value;
  }

  /** A short history of a subscription, for failure messages. */
  describe(sub: ModelSub): string {
    const writes = sub.writes.map((w) => `${w.at}:${w.by}${w.maybe ? '?' : ''}${w.landed ? '!' : ''}:${w.field}=${String(w.value)}`).join(' ');
    return `#${sub.id} (${sub.origin}, ${sub.label}, guids ${sub.handles.join('→')}${sub.excused ? ', excused' : ''}) ${writes}`;
  }
}
