// Found by the chaos soak's last-copy family (issue 31; OPA chaos seeds 55, 82, 126, 152): a change the page's
// last copy carried as it went away may have reached the server (the next start cannot know whether that copy
// left), so the design counts it as handed out, and fold-back applies only to a change never handed out. Here
// the next start folds the app's toggle back onto the copied change and drops it: the server keeps the copy's
// value, and the listener's last word is lost.
import { describe, expect, it } from 'vitest';
import type { LastChanceRequest } from '../../src/protocol.ts';
import { engine, server, settle, TOKEN, until } from './helpers.ts';

describe('the next start after a last copy went out', () => {
  it("a toggle back of a change the copy carried is sent, not folded away (the copy's PATCH reached the server)", async () => {
    const s = await server({ seed: 2 });
    const first = engine(s);
    await first.sync();
    const { guid } = s.state().find((x) => x.is_subscribed)!;
    let copy: LastChanceRequest[] = [];
    first.onLastChance((c) => void (copy = c));
    first.setOnline(false);
    await first.update(guid, { isSubscribed: false });
    await until(() => copy.some((r) => r.method === 'PATCH'), 3000, 'the copy with the PATCH');
    // The page goes away: it sends its copy (nobody reads the answers), and the worker dies with it.
    for (const r of copy) await fetch(new URL(r.path, s.url.replace(/\/*$/, '/')), { method: r.method, headers: { ...r.headers, Authorization: `Bearer ${TOKEN}` }, body: r.body });
    expect(s.entry(guid)?.is_subscribed).toBe(false);
    await first.close();
    // The next start: the app takes the change back before this engine has sent anything.
    const next = engine(s, { dbName: first.dbName });
    next.setOnline(false);
    await next.update(guid, { isSubscribed: true });
    next.setOnline(true);
    await settle(next);
    expect(s.entry(guid)?.is_subscribed).toBe(true);
    expect((await next.subscription(guid))?.isSubscribed).toBe(true);
  });
});
