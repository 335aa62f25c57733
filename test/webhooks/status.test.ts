import { randomBytes } from 'node:crypto';
import { ROLES } from '@vault-yield/devstack/postgres';
import { createPgPool, createWebhookStore, type Pool, webhookSecretKeys } from '@vault-yield/store';
import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/run.js';

/**
 * `vault-yield status` says how many webhook signing secrets are still plaintext (#42 item 3:
 * from before encryption, migration 0025 moved them as they were) and the cure, `webhooks rekey`
 * — to the roles that may read the secrets (the migrator, vault_yield_webhooks). A serving role
 * (writer, reader) is refused the secrets: status says it cannot tell, never 0. Real Postgres in
 * the production role layout, the CLI as its own process.
 */
let db: TestDatabase;
let pool: Pool;
const key = randomBytes(32).toString('base64');

beforeAll(async () => {
  db = await createTestDatabase('webhook_status', { split: true });
  pool = createPgPool({ url: db.webhooksUrl, applicationName: 'webhook-status-test', max: 1 });
  // Two endpoints as a database from before encryption holds them (a store without a key stores
  // the secret as given), one sealed under the key.
  const plain = createWebhookStore(pool, db.schema);
  const sealed = createWebhookStore(pool, db.schema, webhookSecretKeys(key));
  for (const [store, n] of [
    [plain, 1],
    [plain, 2],
    [sealed, 3],
  ] as const)
    await store.addEndpoint({
      url: `https://hooks${n}.example.com/in`,
      secret: `whsec_${randomBytes(32).toString('base64')}`,
      vaults: null,
      types: null,
      ledgerSchema: db.schema,
    });
});

afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

/** No broker: status reports no lag (its Kafka figures are not what is tried here). */
const statusEnv = (url: string) => ({ DATABASE_URL: url, PROJECTION_SCHEMA: db.schema, KAFKA_BROKERS: '' });

/** status's webhooks line, and its --json figures. */
async function status(url: string) {
  const [text, json] = await Promise.all([
    runCli(['status'], statusEnv(url)),
    runCli(['status', '--json'], statusEnv(url)),
  ]);
  expect(text.stderr).toBe('');
  expect(text.code).toBe(0);
  expect(json.code).toBe(0);
  const lines = text.stdout.split('\n').filter((l) => l.startsWith('webhooks '));
  expect(lines).toHaveLength(1);
  return {
    line: lines[0] ?? '',
    figures: (JSON.parse(json.stdout) as { webhookSecrets?: unknown }).webhookSecrets,
  };
}

describe('status: webhook secrets still in plaintext', () => {
  it('names the count and the cure to a role that may read the secrets; rekey makes it none', async () => {
    const before = await status(db.migratorUrl);
    expect(before.line).toBe(
      'webhooks      2 signing secrets stored in plaintext (of 3): run `vault-yield webhooks rekey` with WEBHOOK_SECRET_KEY to seal them (the deliverer also seals them when it starts)',
    );
    expect(before.figures).toEqual({ schema: db.schema, plaintext: 2, sealed: 1, table: 'webhook_secrets' });

    const rekey = await runCli(['webhooks', 'rekey'], {
      DATABASE_URL: db.webhooksUrl,
      PROJECTION_SCHEMA: db.schema,
      WEBHOOK_SECRET_KEY: key,
    });
    expect(rekey.code).toBe(0);
    const after = await status(db.migratorUrl);
    expect(after.line).toBe('webhooks      no signing secret in plaintext (3 sealed)');
    expect(after.figures).toEqual({ schema: db.schema, plaintext: 0, sealed: 3, table: 'webhook_secrets' });
  });

  it('as the writer or the reader (refused the secrets) it cannot tell, not 0', async () => {
    const [writer, reader] = await Promise.all([status(db.writerUrl), status(db.readerUrl)]);
    for (const [r, role] of [
      [writer, ROLES.writer],
      [reader, ROLES.reader],
    ] as const) {
      expect(r.line).toBe(
        `webhooks      cannot tell how many signing secrets are plaintext: role ${role} may not read ${db.schema}.webhook_secrets (run status as the migrator or ${ROLES.webhooks})`,
      );
      expect(r.figures).toEqual({
        schema: db.schema,
        plaintext: null,
        sealed: null,
        role,
        table: 'webhook_secrets',
      });
    }
  });
});
