// "Another device": a play action uploaded through the gPodder reference server's controls
// (`POST /__admin/episodes`) as if from the listener's phone, stamped now; a sync then pulls it here.
import type { EpisodeRef, EpisodeState } from '../src/index.ts';
import type { Admin } from './admin.ts';

/** The device id the other device's actions carry. */
export const OTHER_DEVICE = 'phone';

/** Where the other device stops: well away from `local`, so the change is plain to see. */
export function otherPosition(local: number, total: number): number {
  return Math.round(local < total / 2 ? (total * 2) / 3 : total / 4);
}

/** The longest the phone waits to act after this device (a clock gone odd must not hang the button). */
const MAX_WAIT_MS = 5000;

/** Upload a play of `ref` (`total` seconds long) from the phone, away from `local`; resolves with where it stopped. */
export async function playElsewhere(admin: Admin, ref: EpisodeRef, total: number, local: EpisodeState | undefined): Promise<number> {
  // Stamps are whole seconds, and the engine stamps an episode's local changes strictly increasing after that
  // rounding (a burst of them runs ahead of the clock): the phone acts after this device's last change, or
  // its play, stamped earlier, would rightly lose.
  const after = local ? Date.parse(local.changedAt) : 0;
  const wait = Math.min(MAX_WAIT_MS, Math.floor(after / 1000) * 1000 + 1000 - Date.now());
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  const position = otherPosition(local?.position ?? 0, total);
  const started = Math.max(0, position - 300);
  // gPodder's action time: UTC without a zone, whole seconds (what every server accepts).
  const timestamp = new Date().toISOString().slice(0, 19);
  const action = { ...ref, device: OTHER_DEVICE, action: 'play', started, position, total, timestamp };
  await admin.post('episodes', { actions: [action] });
  return position;
}
