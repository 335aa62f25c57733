import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { rateLimit } from './rate-limit.js';

function app(rate: number, burst: number, clock: { t: number }) {
  const a = new Hono();
  a.use(
    '*',
    rateLimit({ ratePerSecond: rate, burst, trustedProxies: { kind: 'hops', hops: 1 } }, () => clock.t),
  );
  a.get('/', (c) => c.text('ok'));
  return (ip: string) => a.request('/', { headers: { 'X-Forwarded-For': ip } });
}

describe('token bucket', () => {
  it('allows a burst, then refills at the configured rate', async () => {
    const clock = { t: 0 };
    const hit = app(2, 4, clock);
    const codes = [];
    for (let i = 0; i < 5; i++) codes.push((await hit('a')).status);
    expect(codes).toEqual([200, 200, 200, 200, 429]);
    clock.t += 499; // < one token at 2/s
    expect((await hit('a')).status).toBe(429);
    clock.t += 1;
    expect((await hit('a')).status).toBe(200);
    expect((await hit('a')).status).toBe(429);
    clock.t += 10_000; // refills to the burst, not beyond
    for (let i = 0; i < 4; i++) expect((await hit('a')).status).toBe(200);
    expect((await hit('a')).status).toBe(429);
  });

  it('429 carries Retry-After (whole seconds until a token) and the error shape', async () => {
    const clock = { t: 0 };
    const hit = app(0.25, 1, clock);
    await hit('b');
    const res = await hit('b');
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('4');
    expect(res.headers.get('ratelimit-remaining')).toBe('0');
    expect(await res.json()).toEqual({
      error: { code: 'rate_limited', message: expect.stringMatching(/4s/) },
    });
  });

  it('clients are independent; rate 0 disables limiting', async () => {
    const clock = { t: 0 };
    const hit = app(1, 1, clock);
    expect((await hit('x')).status).toBe(200);
    expect((await hit('y')).status).toBe(200);
    expect((await hit('x')).status).toBe(429);
    const off = app(0, 1, clock);
    for (let i = 0; i < 20; i++) expect((await off('z')).status).toBe(200);
  });
});
