import { HttpRequestError } from 'viem';
import { describe, expect, it } from 'vitest';
import { retryAfterMs, withRetry } from './retry.js';

const limited = (retryAfter?: string) =>
  new HttpRequestError({
    url: 'http://127.0.0.1:8545',
    status: 429,
    headers: new Headers(retryAfter === undefined ? {} : { 'Retry-After': retryAfter }),
    details: 'Too Many Requests',
  });

describe('Retry-After', () => {
  it('reads delta-seconds and HTTP dates, capped at a minute', () => {
    expect(retryAfterMs(limited('2'))).toBe(2000);
    expect(retryAfterMs(limited('0.5'))).toBe(500);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs(limited('Thu, 01 Jan 2026 00:00:03 GMT'), now)).toBe(3000);
    expect(retryAfterMs(limited('3600'))).toBe(60_000);
    expect(retryAfterMs(limited())).toBeUndefined();
    expect(retryAfterMs(limited('soon'))).toBeUndefined();
    expect(retryAfterMs(new Error('x', { cause: limited('4') }))).toBe(4000);
  });

  it('withRetry waits at least what a 429 asks for, and backs off as usual otherwise', async () => {
    /** The first retry's delay; the wait itself is skipped (an aborted signal ends a sleep at once). */
    const firstDelay = async (error: Error) => {
      const abort = new AbortController();
      let delay = -1;
      await withRetry(
        async () => {
          throw error;
        },
        {
          baseDelayMs: 1,
          signal: abort.signal,
          onRetry: ({ delayMs }) => {
            delay = delayMs;
            abort.abort();
          },
        },
      ).catch(() => {});
      return delay;
    };
    expect(await firstDelay(limited('3'))).toBeGreaterThanOrEqual(3000);
    expect(await firstDelay(limited())).toBeLessThan(100);
    // Retry-After of a 5xx (maintenance) is not a rate limit: usual back-off.
    const unavailable = new HttpRequestError({
      url: 'u',
      status: 503,
      headers: new Headers({ 'Retry-After': '9' }),
    });
    expect(await firstDelay(unavailable)).toBeLessThan(100);
  });
});

describe('a node behind the head', () => {
  it("retries 'behind' answers on a budget of their own, not the others'", async () => {
    let n = 0;
    const got = await withRetry(
      async () => {
        n++;
        if (n <= 8) throw new Error('header not found');
        if (n === 9) throw new Error('fetch failed');
        return 'ok';
      },
      { retries: 1, baseDelayMs: 1 },
    );
    expect(got).toBe('ok');
    expect(n).toBe(10);
    await expect(
      withRetry(
        async () => {
          throw new Error('unknown block');
        },
        { behindRetries: 3, baseDelayMs: 1 },
      ),
    ).rejects.toThrow('unknown block');
  });
});
