import { describe, expect, it } from 'vitest';
import { engine, picture, server, serverPicture, settle } from './helpers.ts';

describe('two devices', () => {
  it('converge to the server state after changes on both and on the server', async () => {
    const s = await server({ seed: 12 });
    const phone = engine(s);
    const laptop = engine(s);
    await Promise.all([phone.sync(), laptop.sync()]);
    const guids = s.state().map((x) => x.guid);
    phone.setOnline(false);
    await phone.update(guids[0]!, { isSubscribed: false });
    await phone.update(guids[1]!, { feedUrl: 'https://phone.example/feed' });
    await phone.add('https://phone-only.example/feed');
    await phone.remove(guids[2]!);
    await laptop.update(guids[3]!, { guid: 'laptop-renamed' });
    await laptop.update(guids[4]!, { isSubscribed: false });
    await laptop.add('https://laptop-only.example/feed');
    s.foreign.patch(guids[5]!, { is_subscribed: false });
    await settle(laptop);
    phone.setOnline(true);
    await settle(phone);
    await laptop.sync();
    await phone.sync();
    const expected = serverPicture(s);
    expect(expected).toHaveLength(12 - 1 + 2);
    expect(picture(await phone.subscriptions())).toEqual(expected);
    expect(picture(await laptop.subscriptions())).toEqual(expected);
    expect((await phone.subscription(guids[3]!))?.guid).toBe('laptop-renamed');
  });
});
