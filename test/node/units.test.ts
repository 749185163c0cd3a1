import { describe, expect, it } from 'vitest';
import { SyncError, isSyncError } from '../../src/errors.ts';
import { defaultDbName } from '../../src/base-url.ts';
import { backoffDelay } from '../../worker/backoff.ts';
import { codeForStatus, parseRetryAfter } from '../../worker/http.ts';
import { formatTimestamp, parseTimestamp } from '../../worker/time.ts';
import { mergeBase } from '../../worker/store/view.ts';

describe('small pieces', () => {
  it('reads timestamps strictly, and naive ones as UTC (never local time)', () => {
    expect(parseTimestamp('2022-05-30T00:00:00.000Z')).toBe(Date.UTC(2022, 4, 30));
    expect(parseTimestamp('2022-05-30T00:00:00')).toBe(Date.UTC(2022, 4, 30));
    expect(parseTimestamp('2022-05-30T02:00:00+02:00')).toBe(Date.UTC(2022, 4, 30));
    expect(parseTimestamp('2022-05-30T02:00:00.123456+0200')).toBe(Date.UTC(2022, 4, 30, 0, 0, 0, 123));
    expect(parseTimestamp('yesterday')).toBeUndefined();
    expect(parseTimestamp('0')).toBeUndefined();
    expect(formatTimestamp(Date.UTC(2022, 4, 30))).toBe('2022-05-30T00:00:00.000Z');
  });

  it('parses Retry-After as seconds or a date', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter(new Date(Date.now() + 10_000).toUTCString())).toBeGreaterThan(8000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });

  it('backs off exponentially with jitter, capped, never below Retry-After', () => {
    const settings = { baseDelay: 100, maxDelay: 1000 };
    expect(backoffDelay(settings, 0, undefined, () => 0)).toBe(50);
    expect(backoffDelay(settings, 0, undefined, () => 1)).toBe(100);
    expect(backoffDelay(settings, 3, undefined, () => 1)).toBe(800);
    expect(backoffDelay(settings, 10, undefined, () => 1)).toBe(1000);
    expect(backoffDelay(settings, 0, 5000, () => 1)).toBe(5000);
  });

  it('maps statuses to codes', () => {
    expect([401, 403, 404, 405, 400, 422, 410, 408, 429, 500, 503].map(codeForStatus)).toEqual([
      'unauthorized', 'unauthorized', 'not-found', 'invalid', 'invalid', 'invalid', 'gone', 'timeout', 'rate-limited', 'server', 'server',
    ]);
  });

  it('merges server states part by part and never goes back in time', () => {
    const held = { guid: 'g', feedUrl: 'https://new', isSubscribed: false, at: 2000, dataAt: 2000 };
    expect(mergeBase(held, { guid: 'g', feedUrl: 'https://old', isSubscribed: true, at: 1000, dataAt: 1000 })).toBeUndefined();
    const renamed = mergeBase(held, { guid: 'g2', feedUrl: 'https://old', isSubscribed: true, at: 3000, dataAt: 1000, guidChanged: 'x' });
    expect(renamed).toMatchObject({ guid: 'g2', feedUrl: 'https://new', isSubscribed: false, at: 3000 });
    const deleted = mergeBase(held, { ...held, deleted: 'd', at: 4000 });
    expect(deleted?.deleted).toBe('d');
    expect(mergeBase(deleted, { ...held, at: 5000, dataAt: 5000 })?.deleted).toBeUndefined();
  });

  it('recognises SyncErrors across realms by name and code', () => {
    expect(isSyncError(new SyncError('gone', 'x'))).toBe(true);
    expect(isSyncError({ name: 'SyncError', code: 'gone', message: 'x' })).toBe(true);
    expect(isSyncError(new Error('x'))).toBe(false);
    expect(isSyncError(null)).toBe(false);
  });

  it('derives a database name per server', () => {
    expect(defaultDbName('https://sync.example/api/v1/')).toBe('opa-sync:https://sync.example/api/v1');
    expect(defaultDbName('https://sync.example/api/v1')).not.toBe(defaultDbName('https://other.example/api/v1'));
  });
});
