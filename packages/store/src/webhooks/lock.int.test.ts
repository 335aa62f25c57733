import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgPool, type Pool } from '../pool/index.js';
import { holdsWebhookLock, releaseWebhookLock, tryWebhookLock } from './lock.js';

/** The deliverer's lock on real Postgres: one session per webhooks schema holds it at a time. */
let db: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase('webhook_lock');
  pool = createPgPool({ url: db.webhooksUrl, applicationName: 'webhook-lock-test', max: 3 });
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

describe('the deliverer lock', () => {
  it('is held by one session per schema, seen by its holder, and free again once released', async () => {
    const [a, b] = [await pool.connect(), await pool.connect()];
    try {
      expect(await holdsWebhookLock(a)).toBe(false);
      expect(await tryWebhookLock(a, 'hooks_one')).toBe(true);
      expect(await holdsWebhookLock(a)).toBe(true);
      // Another session: the same schema's lock is taken, another schema's is free.
      expect(await tryWebhookLock(b, 'hooks_one')).toBe(false);
      expect(await holdsWebhookLock(b)).toBe(false);
      expect(await tryWebhookLock(b, 'hooks_two')).toBe(true);
      await releaseWebhookLock(b);
      await releaseWebhookLock(a);
      expect(await holdsWebhookLock(a)).toBe(false);
      expect(await tryWebhookLock(b, 'hooks_one')).toBe(true);
      await releaseWebhookLock(b);
    } finally {
      a.release();
      b.release();
    }
  });

  it('is let go when its session ends', async () => {
    const a = await pool.connect();
    expect(await tryWebhookLock(a, 'hooks_three')).toBe(true);
    a.release(true); // the connection closed: its session's locks go with it
    const b = await pool.connect();
    try {
      // The server ends the closed session's backend a moment later: taken once it has.
      let taken = false;
      for (let i = 0; i < 500 && !taken; i++) {
        taken = await tryWebhookLock(b, 'hooks_three');
        if (!taken) await new Promise((r) => setTimeout(r, 20));
      }
      expect(taken).toBe(true);
      await releaseWebhookLock(b);
    } finally {
      b.release();
    }
  });
});
