import type { EpisodeRef, ErrorInfo, SyncReport, SyncStatus } from '../src/types.ts';

/** Messages between the contexts that share one database. */
export type ChannelMessage =
  | { type: 'change'; guids: string[]; queue?: true; episodes?: EpisodeRef[] }
  | { type: 'queued' }
  /** A follower whose page is shown asks the leader to pull. */
  | { type: 'pull' }
  | { type: 'status'; status: SyncStatus }
  /** A context that just started asks the leader for its status (it does not know yet who syncs). */
  | { type: 'hello' }
  | { type: 'sync-request'; id: string }
  | { type: 'sync-result'; id: string; report?: SyncReport; error?: ErrorInfo };

/** A BroadcastChannel for one database (a no-op where BroadcastChannel does not exist). */
export interface Channel {
  post(message: ChannelMessage): void;
  close(): void;
}

/** Open the channel; messages from other contexts go to `onMessage` (never our own). */
export function openChannel(name: string, onMessage: (message: ChannelMessage) => void): Channel {
  if (typeof BroadcastChannel === 'undefined') return { post() {}, close() {} };
  const channel = new BroadcastChannel(`opa-sync:${name}`);
  channel.onmessage = (event: MessageEvent<ChannelMessage>) => onMessage(event.data);
  // In Node an open channel keeps the process alive; it must not outlive close() or hold up exit.
  (channel as unknown as { unref?: () => void }).unref?.();
  let open = true;
  return {
    post(message) {
      // After close() a late event (an edit that committed meanwhile) has nobody left to tell.
      if (open) channel.postMessage(message);
    },
    close() {
      open = false;
      channel.close();
    },
  };
}
