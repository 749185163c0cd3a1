// Property tests of what the HTTP layer and the timestamp reader take from a server: error bodies
// (parseError), Retry-After (parseRetryAfter and the error a response turns into), server timestamps
// (worker/time.ts), and any status with any body. Nothing here throws anything but a SyncError; every delay
// the server sets is one a timer can hold and no longer than what the server asked for.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSyncError, SyncError } from '../../src/errors.ts';
import type { Clock } from '../../src/types.ts';
import { parseError, parseRetryAfter } from '../../worker/http.ts';
import { formatTimestamp, parseTimestamp } from '../../worker/time.ts';
import { asText, badTimestamp, FUZZ, FUZZ_IO, fuzzHttp, isoTimestamp, stillClock } from './fuzz.arbitraries.ts';

/** The longest delay `setTimeout` holds (a longer one fires at once). */
const MAX_TIMER = 2 ** 31 - 1;

/** Retry-After values: delta-seconds of every size, HTTP dates, and junk. */
const retryAfter = fc.oneof(
  fc.nat().map(String),
  fc.constantFrom('0', '1', '0.2', '31536000', '99999999999', '9'.repeat(400), '1e9', '-1', ' 5 ', '5s', '', 'soon', 'Wed, 21 Oct 2015 07:28:00 GMT'),
  fc.date({ noInvalidDate: true }).map((d) => d.toUTCString()),
  fc.string(),
);

const clockAt = (now: number): Clock => ({ ...stillClock, now: () => now });

async function failure(status: number, headers: Record<string, string>, clock: Clock = stillClock): Promise<SyncError> {
  const { http } = fuzzHttp(() => ({ status, text: asText({ code: status, message: 'busy' }), headers }), clock);
  try {
    await http.request('GET', http.url('subscriptions'));
  } catch (error) {
    expect(isSyncError(error)).toBe(true);
    return error as SyncError;
  }
  throw new Error(`a ${status} resolved`);
}

describe('fuzz: server timestamps', () => {
  it('any string: undefined or a time a Date holds, never a throw', () => {
    fc.assert(
      fc.property(fc.oneof(badTimestamp, isoTimestamp, fc.string()), (value) => {
        const ms = parseTimestamp(value);
        if (ms === undefined) return;
        expect(Number.isFinite(ms)).toBe(true);
        expect(formatTimestamp(ms)).toMatch(/Z$/);
      }),
      FUZZ,
    );
  });

  it('valid timestamps read back to the same instant, whatever the zone spelling', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date(Date.UTC(1971, 0, 1)), max: new Date(Date.UTC(9998, 11, 31)), noInvalidDate: true }), fc.integer({ min: -14 * 60, max: 14 * 60 }), (d, offsetMin) => {
        expect(parseTimestamp(d.toISOString())).toBe(d.getTime());
        expect(parseTimestamp(formatTimestamp(d.getTime()))).toBe(d.getTime());
        const local = new Date(d.getTime() + offsetMin * 60_000).toISOString().slice(0, 23);
        const sign = offsetMin < 0 ? '-' : '+';
        const abs = Math.abs(offsetMin);
        const zone = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
        expect(parseTimestamp(`${local}${zone}`)).toBe(d.getTime());
      }),
      FUZZ,
    );
  });
});

describe('fuzz: error bodies and Retry-After', () => {
  it('parseError: an { code, message } error body or undefined, for any JSON', () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), fc.record({ code: fc.oneof(fc.string(), fc.integer(), fc.jsonValue()), message: fc.oneof(fc.string(), fc.jsonValue()) })), (value) => {
        const e = parseError(value);
        if (e === undefined) return;
        expect(typeof e.message).toBe('string');
        expect(['string', 'number']).toContain(typeof e.code);
      }),
      FUZZ,
    );
  });

  it('parseRetryAfter: undefined or a finite delay a timer can hold (issue 16 #9)', () => {
    fc.assert(
      fc.property(retryAfter, fc.integer({ min: 0, max: 4_000_000_000_000 }), (value, now) => {
        const ms = parseRetryAfter(value, now);
        if (ms === undefined) return;
        expect(Number.isFinite(ms) && ms >= 0, `Retry-After ${JSON.stringify(value.slice(0, 40))} gave ${ms}`).toBe(true);
        expect(ms, `Retry-After ${JSON.stringify(value.slice(0, 40))}`).toBeLessThanOrEqual(MAX_TIMER);
      }),
      FUZZ,
    );
  });

  it('a 429/503 answer: a typed error whose retryAfter is a delay a timer can hold (issue 16 #9)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(429, 503), retryAfter, async (status, value) => {
        const error = await failure(status, { 'Retry-After': value });
        expect(error.status).toBe(status);
        if (error.retryAfter === undefined) return;
        expect(Number.isFinite(error.retryAfter) && error.retryAfter >= 0, `Retry-After ${JSON.stringify(value.slice(0, 40))} gave ${error.retryAfter}`).toBe(true);
        expect(error.retryAfter, `Retry-After ${JSON.stringify(value.slice(0, 40))}`).toBeLessThanOrEqual(MAX_TIMER);
      }),
      FUZZ_IO,
    );
  });

  it('a Retry-After date is read against the answer\'s Date, not the device clock: never a longer hold than the server asked (issue 16 #8)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 0, 1) }),
        fc.integer({ min: 0, max: 600 }),
        fc.integer({ min: -86_400_000, max: 86_400_000 }),
        async (server, asked, skew) => {
          const date = new Date(Math.floor(server / 1000) * 1000);
          const at = new Date(date.getTime() + asked * 1000);
          const error = await failure(503, { 'Retry-After': at.toUTCString(), Date: date.toUTCString() }, clockAt(server + skew));
          // A second of slack: the Date header has whole seconds.
          expect(error.retryAfter ?? 0, `asked ${asked} s; device clock ${skew} ms off`).toBeLessThanOrEqual(asked * 1000 + 1000);
        },
      ),
      FUZZ_IO,
    );
  });
});

describe('fuzz: any status, any body', () => {
  it('a 2xx resolves with its JSON (or nothing); anything else is a SyncError with the status', async () => {
    const body = fc.oneof(fc.jsonValue().map(asText), fc.constantFrom('', ' ', '<html></html>', '{', 'null', '1e400'));
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 200, max: 599 }), body, fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE'), async (status, text, method) => {
        const { http } = fuzzHttp(() => ({ status, text }));
        try {
          const response = await http.request(method, http.url('subscriptions'), method === 'GET' ? undefined : {});
          expect(status >= 200 && status < 300).toBe(true);
          expect(response.status).toBe(status);
          if (text.trim() !== '' && ![204, 205].includes(status)) expect(response.body).toEqual(JSON.parse(text));
        } catch (error) {
          expect(isSyncError(error), `threw ${String(error)}`).toBe(true);
          if (status >= 300) expect((error as SyncError).status).toBe(status);
        }
      }),
      FUZZ_IO,
    );
  });
});
