import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { backoffDelay, classify } from './attempt.js';
import { loadWebhooksEnv } from './config.js';
import { generateSecret, SECRET_PREFIX, signature, webhookHeaders } from './sign.js';

describe('webhook signing (Standard Webhooks)', () => {
  it('makes whsec_ secrets of 32 random bytes', () => {
    const a = generateSecret();
    expect(a.startsWith(SECRET_PREFIX)).toBe(true);
    expect(Buffer.from(a.slice(SECRET_PREFIX.length), 'base64')).toHaveLength(32);
    expect(generateSecret()).not.toBe(a);
  });

  it('signs "id.timestamp.body" with the secret bytes: the standard test vector', () => {
    // standardwebhooks.com's reference vector.
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const id = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
    const body = '{"test": 2432232314}';
    expect(signature(secret, id, 1614265330, body)).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('sends the three headers with the attempt time', () => {
    const h = webhookHeaders('whsec_AAAA', 'msg_1', '{}', 1_700_000_000_500);
    expect(h['webhook-timestamp']).toBe('1700000000');
    const mac = createHmac('sha256', Buffer.from('AAAA', 'base64'))
      .update('msg_1.1700000000.{}')
      .digest('base64');
    expect(h['webhook-signature']).toBe(`v1,${mac}`);
    expect(h['webhook-id']).toBe('msg_1');
  });
});

describe('what an answer means', () => {
  it('delivers on 2xx, retries 5xx/408/429, parks other 4xx and 3xx', () => {
    expect(classify(200, null).kind).toBe('delivered');
    expect(classify(204, null).kind).toBe('delivered');
    for (const s of [500, 502, 503, 504, 408, 429]) expect(classify(s, null).kind).toBe('retry');
    // 410 Gone parks and disables the endpoint (Standard Webhooks).
    expect(classify(410, null)).toMatchObject({ kind: 'park', disable: true });
    expect(classify(404, null)).not.toHaveProperty('disable');
    for (const s of [400, 401, 403, 404, 410, 413, 422, 301, 302, 307])
      expect(classify(s, null).kind).toBe('park');
  });

  it('honours Retry-After in seconds or as a date', () => {
    expect(classify(429, '7')).toMatchObject({ kind: 'retry', retryAfterMs: 7_000 });
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(classify(503, 'Thu, 01 Jan 2026 00:00:30 GMT', now)).toMatchObject({ retryAfterMs: 30_000 });
    expect(classify(503, 'soon')).not.toHaveProperty('retryAfterMs');
  });

  it('backs off exponentially with jitter, capped', () => {
    expect(backoffDelay(0, 1_000, 60_000, () => 0)).toBe(500);
    expect(backoffDelay(0, 1_000, 60_000, () => 1)).toBe(1_000);
    expect(backoffDelay(3, 1_000, 60_000, () => 1)).toBe(8_000);
    expect(backoffDelay(30, 1_000, 60_000, () => 1)).toBe(60_000);
    expect(backoffDelay(30, 1_000, 60_000, () => 0)).toBe(30_000);
  });
});

describe('webhooks environment', () => {
  it('asks for a direct URL behind a transaction-mode pooler for the deliverer only', () => {
    const pooled = { DATABASE_URL: 'postgres://w@127.0.0.1:6432/db', DATABASE_POOLING: 'transaction' };
    expect(() => loadWebhooksEnv(pooled)).toThrow(
      /DATABASE_DIRECT_URL: required with DATABASE_POOLING=transaction \(the deliverer holds its lock/,
    );
    expect(() => loadWebhooksEnv(pooled, 'deliverer')).toThrow(/DATABASE_DIRECT_URL/);
    // add, list, remove, deliveries, retry: plain statements, which the pooler serves.
    expect(loadWebhooksEnv(pooled, 'admin').DATABASE_POOLING).toBe('transaction');
    const direct = 'postgres://w@127.0.0.1:5432/db';
    const key = { WEBHOOK_SECRET_KEY: 'ab'.repeat(32) };
    expect(loadWebhooksEnv({ ...pooled, ...key, DATABASE_DIRECT_URL: direct }).DATABASE_DIRECT_URL).toBe(
      direct,
    );
  });

  it('reads WEBHOOK_ALLOW_NETWORKS as CIDRs, none by default, and refuses anything else', () => {
    const base = { DATABASE_URL: 'postgres://w@127.0.0.1:5432/db' };
    expect(loadWebhooksEnv(base, 'admin').WEBHOOK_ALLOW_NETWORKS).toBeUndefined();
    expect(
      loadWebhooksEnv({ ...base, WEBHOOK_ALLOW_NETWORKS: '10.0.0.0/8, fd00::/8' }, 'admin')
        .WEBHOOK_ALLOW_NETWORKS,
    ).toBe('10.0.0.0/8, fd00::/8');
    expect(() => loadWebhooksEnv({ ...base, WEBHOOK_ALLOW_NETWORKS: 'intranet' }, 'admin')).toThrow(
      /WEBHOOK_ALLOW_NETWORKS/,
    );
  });
});
