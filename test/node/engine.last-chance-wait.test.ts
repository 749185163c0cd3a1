// An edit resolves once the page holds a copy with it: the first copy built after the edit, not every rebuild
// later events start (issue 31 item 4: an `update()` waited for each rebuild its own push and acknowledgement
// started, built twice in 89 of 100 calls).
import { expect, it } from 'vitest';
import type { LastChanceRequest } from '../../src/protocol.ts';
import type { Clock } from '../../src/types.ts';
import { systemClock } from '../../worker/clock.ts';
import { engine, server, until } from './helpers.ts';

/** The wall clock whose timers of a second or more never fire: the engine's patience with a silent page never runs out here. */
const patient: Clock = { ...systemClock, setTimeout: (callback, ms) => (ms >= 1000 ? undefined : systemClock.setTimeout(callback, ms)) };

it('an edit waits for the first copy built after it, not for a later rebuild the page has not taken yet', async () => {
  const s = await server({ seed: 3 });
  const e = engine(s, { pushDelay: 3_600_000, clock: patient });
  // Once holding, each copy told waits for the test to take it, as a page that has not answered yet.
  let holding = false;
  const told: { copy: LastChanceRequest[]; take: () => void }[] = [];
  e.onLastChance((copy) => (holding ? new Promise<void>((take) => told.push({ copy, take })) : told.push({ copy, take: () => undefined })));
  await e.sync();
  const [a, b, c] = s.state().map((x) => x.guid);
  // An edit the page takes at once: every copy the pull's events started is built and told before it resolves.
  await e.update(a!, { isSubscribed: false });
  holding = true;

  let firstDone = false;
  const first = e.update(b!, { isSubscribed: false }).then(() => (firstDone = true));
  const withFirst = await until(() => (told.at(-1)?.copy.length === 2 ? told.at(-1) : undefined), 3000, 'the copy with the first edit');
  // A second edit while the page has not taken the first one's copy: its copy can only be built after.
  let secondDone = false;
  const second = e.update(c!, { isSubscribed: false }).then(() => (secondDone = true));
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(firstDone).toBe(false);
  withFirst.take();
  const withAll = await until(() => (told.at(-1)?.copy.length === 3 ? told.at(-1) : undefined), 3000, 'the copy with both edits');
  // The first edit's copy is held: it resolves while the page still has not taken the rebuild for the second.
  await until(() => firstDone, 3000, 'the first edit to resolve while the rebuild waits for the page');
  expect(secondDone).toBe(false);
  withAll.take();
  await second;
  expect(withAll.copy.map((r) => [r.method, r.path])).toEqual([a, b, c].map((guid) => ['PATCH', `subscriptions/${encodeURIComponent(guid!)}`]));
});
