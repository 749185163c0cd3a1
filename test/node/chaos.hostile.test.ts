// Hostile or broken responses that engine.security.test.ts does not cover: `next` links that leave the base
// origin in every spelling (with a listener there that must hear nothing), `total` that lies while paging, 5xx
// answers whose body is an HTML page, and error `code` sent as a string.
import { afterEach, describe, expect, it } from 'vitest';
import { otherOrigin, Scope } from '../chaos/fixtures.ts';
import { checkInvariants, credentialViolations, cursorViolations } from '../chaos/invariants.ts';
import { Model } from '../chaos/model.ts';
import type { SentRequest, Transport } from '../chaos/transport.ts';
import { engine, picture, server, serverPicture, settle, spyFetch, until } from './helpers.ts';

const scope = new Scope();
afterEach(() => scope.close());

/** A fetch that rewrites every list page's body. */
function rewriteLists(edit: (body: Record<string, unknown>, url: URL, n: number) => void): typeof fetch {
  let n = 0;
  return spyFetch(async (url, init, real) => {
    const response = await real(url, init);
    if ((init?.method ?? 'GET') !== 'GET' || !url.pathname.endsWith('/subscriptions') || response.status !== 200) return response;
    const body = (await response.json()) as Record<string, unknown>;
    edit(body, url, ++n);
    return new Response(JSON.stringify(body), { status: 200, headers: { 'Content-Type': 'application/json' } });
  });
}

describe('chaos: next links that leave the origin', () => {
  it('no spelling of another origin gets a request (let alone credentials); pages are walked instead', async () => {
    const other = await otherOrigin(scope);
    const s = await server({ seed: 17 });
    const port = new URL(s.origin).port;
    const spellings = [
      (q: string) => `${other.origin}/v1/subscriptions?${q}`,
      (q: string) => `//127.0.0.1:${other.port}/v1/subscriptions?${q}`,
      (q: string) => `http://localhost:${port}/v1/subscriptions?${q}`,
      (q: string) => `https://127.0.0.1:${port}/v1/subscriptions?${q}`,
      (q: string) => `http://user:pw@127.0.0.1:${other.port}/v1/subscriptions?${q}`,
      (q: string) => `HTTP://127.0.0.1:${other.port}/v1/subscriptions?${q}`,
      (q: string) => `http://127.0.0.1:${other.port}\\@127.0.0.1:${port}/v1/subscriptions?${q}`,
    ];
    for (const spell of spellings) {
      const next = rewriteLists((body, url) => {
        const page = Number(url.searchParams.get('page') ?? 1) + 1;
        body.next = spell(`page=${page}&per_page=4`);
      });
      // Every request the engine makes is audited before it reaches the rewriting spy and the network.
      const sent: SentRequest[] = [];
      const audited = spyFetch(async (url, init) => {
        sent.push({ method: init?.method ?? 'GET', url: url.href, origin: url.origin, credentials: new Headers(init?.headers).has('authorization') });
        return next(url, init);
      });
      const e = engine(s, { pageSize: 4, fetch: audited });
      await e.sync();
      expect(picture(await e.subscriptions()), spell('')).toEqual(serverPicture(s));
      expect(credentialViolations(s.origin, { sent } as Pick<Transport, 'sent'> as Transport, other), spell('')).toEqual([]);
      await checkInvariants({ engine: e, server: s, other });
      await e.close();
    }
    expect(other.received).toEqual([]);
  });
});

describe('chaos: total that lies while paging', () => {
  it('total equal to each page length (as one server sends it): every page is still drained', async () => {
    const s = await server({ seed: 23, links: 'none' });
    const e = engine(s, { pageSize: 5, fetch: rewriteLists((body) => (body.total = (body.subscriptions as unknown[]).length)) });
    await e.sync();
    expect(picture(await e.subscriptions())).toEqual(serverPicture(s));
    await checkInvariants({ engine: e, server: s });
  });

  it('total that changes from page to page: drained again, and the cursor never passes what was skipped', async () => {
    const s = await server({ seed: 18, links: 'none' });
    const first = engine(s, { pageSize: 4 });
    await first.sync();
    const cursor = (await first.status()).cursor;
    await first.close();
    const model = new Model();
    for (const view of s.state()) model.fromServer(view);
    for (const view of s.state().slice(0, 10)) {
      s.foreign.patch(view.guid, { new_feed_url: `https://moved.example/${view.guid}.xml` });
      model.foreignPatch(model.byHandle(view.guid)!, { new_feed_url: `https://moved.example/${view.guid}.xml` });
    }
    let lies = 6;
    let pages = 0;
    const e = engine(s, {
      pageSize: 4,
      dbName: first.dbName,
      fetch: rewriteLists((body, _url, n) => {
        pages = n;
        if (lies-- > 0) body.total = (body.total as number) + n;
      }),
    });
    const outcome = await e.sync().then(
      () => 'done',
      (error: { code?: string }) => error.code,
    );
    // Either the bounded re-drains outlasted the lies, or the pull gave up: never a cursor past a skipped change.
    expect(['done', 'bad-response']).toContain(outcome);
    // The lies were noticed: more pages than one honest drain of the changes would take.
    expect(pages).toBeGreaterThan(Math.ceil(s.state().length / 4) + 1);
    if (outcome === 'bad-response') expect((await e.status()).cursor).toBe(cursor);
    expect(await cursorViolations(e.dbName, s)).toEqual([]);
    await settle(e);
    await checkInvariants({ engine: e, server: s, model });
  });
});

describe('chaos: error bodies', () => {
  const HTML = '<!doctype html><html><body><h1>502 Bad Gateway</h1><hr><center>nginx</center></body></html>';

  it('5xx with an HTML page, on a pull and on a push: retried, readable errors, nothing lost', async () => {
    const s = await server({ seed: 5 });
    const e = engine(s);
    const model = new Model();
    for (const view of s.state()) model.fromServer(view);
    await e.sync();
    const before = (await e.status()).cursor;
    s.failNext(1, 502, { method: 'GET', path: '/subscriptions' }, { body: HTML, contentType: 'text/html' });
    const error = await e.sync().then(() => undefined, (err: { code?: string; status?: number; message: string }) => err);
    expect(error).toMatchObject({ code: 'server', status: 502 });
    expect(error?.message).not.toContain('<');
    expect((await e.status()).cursor).toBe(before);

    const guid = s.state()[2]!.guid;
    s.failNext(1000, 503, { method: 'PATCH' }, { body: HTML, contentType: 'text/html' });
    await e.update(guid, { isSubscribed: false });
    model.localUpdate(model.byHandle(guid)!, { isSubscribed: false });
    const waiting = await until(async () => (await e.pending()).find((p) => p.lastError), 3000, 'a retried PATCH');
    expect(waiting.lastError).toMatchObject({ code: 'server', status: 503 });
    expect(waiting.lastError!.message).not.toContain('<');
    s.clearFaults();
    await settle(e);
    await checkInvariants({ engine: e, server: s, model });
  });

  it('error code sent as a string: refusals keep the server message, transient ones are still retried', async () => {
    const s = await server({ seed: 4 });
    s.errorCodeAsString(true);
    const e = engine(s);
    const model = new Model();
    for (const view of s.state()) model.fromServer(view);
    await e.sync();
    const [a, b] = s.state().map((x) => x.guid);
    s.failNext(1, 405, { method: 'PATCH', path: `/subscriptions/${a}` });
    s.failNext(2, 503, { method: 'PATCH', path: `/subscriptions/${b}` });
    await e.update(a!, { isSubscribed: false });
    await e.update(b!, { isSubscribed: false });
    model.localUpdate(model.byHandle(b!)!, { isSubscribed: false });
    await settle(e);
    const [refused] = await e.failed();
    expect(refused).toMatchObject({ guid: a, reason: { code: 'invalid', status: 405 } });
    expect(refused!.reason.message).toContain('Input could not be validated');
    await e.discard(refused!.id);
    model.excuse(model.byHandle(a!)!);
    await settle(e);
    await checkInvariants({ engine: e, server: s, model });
  });
});
