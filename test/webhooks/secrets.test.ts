import { createPgPool, isSealedSecret, type Pool, webhookMessageId } from '@vault-yield/store';
import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import { insertLedger, randomAddress, type Writer, writer } from '@vault-yield/test-kit/reader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/run.js';
import {
  type DeliveredRow,
  type Receiver,
  readmeVerify,
  startDeliverer,
  startReceiver,
  type Verify,
  waitFor,
} from './support.js';

/**
 * Issue #42 item 3, as an operator runs it: the deliverer and the `webhooks` CLI as the webhooks
 * role, the signing secrets sealed under WEBHOOK_SECRET_KEY. A real Postgres (production layout),
 * a real receiver on 127.0.0.1 verifying each delivery with the README's snippet.
 */
let db: TestDatabase;
let w: Writer;
let migrator: Pool;
let verify: Verify;
let receiver: Receiver;

const K1 = Buffer.alloc(32, 1).toString('base64');
const K2 = Buffer.alloc(32, 2).toString('hex');

beforeAll(async () => {
  db = await createTestDatabase('webhooks_secrets', { split: true });
  w = writer(db.writerUrl, db.schema);
  migrator = createPgPool({ url: db.migratorUrl, applicationName: 'webhooks-secrets-test', max: 1 });
  verify = await readmeVerify();
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await w?.end();
  await migrator?.end();
  await db?.drop();
});

const env = (extra: Record<string, string> = {}): Record<string, string> => ({
  DATABASE_URL: db.webhooksUrl,
  PROJECTION_SCHEMA: db.schema,
  VIEWS_SCHEMA: 'webhooks_secrets_no_views',
  WEBHOOK_POLL_INTERVAL_MS: '50',
  WEBHOOK_ALLOW_NETWORKS: '127.0.0.0/8',
  WEBHOOK_SECRET_KEY: K1,
  ...extra,
});
const cli = (args: string[], extra: Record<string, string> = {}) => runCli(['webhooks', ...args], env(extra));

/** What a dump of webhook_secrets holds for the endpoint. */
const stored = async (id: number): Promise<string> =>
  (
    await migrator.query<{ secret: string }>(
      `select secret from ${db.schema}.webhook_secrets where endpoint_id = $1`,
      [id],
    )
  ).rows[0]?.secret ?? '';

/** Writes `n` deposits of a new vault from `block`, runs a deliverer with `extra` until they are verified. */
async function deliverVerified(
  endpoint: { id: number; secret: string },
  block: number,
  extra: Record<string, string>,
): Promise<void> {
  const vault = randomAddress();
  const before = receiver.received.length;
  const run = startDeliverer(env(extra));
  try {
    await run.ready;
    await insertLedger(
      w,
      Array.from({ length: 3 }, (_, i) => ({ vault, type: 'deposit' as const, blockNumber: block + i })),
    );
    await waitFor('3 deliveries', () => receiver.received.length >= before + 3);
    for (const r of receiver.received.slice(before)) {
      const body = verify(endpoint.secret, r.headers, r.body) as { data: DeliveredRow };
      expect(r.id).toBe(webhookMessageId(endpoint.id, body.data));
      expect(body.data.vault).toBe(vault);
    }
    expect(run.logs.join('\n')).not.toContain(endpoint.secret);
    expect(run.logs.join('\n')).not.toContain(K1);
  } finally {
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  }
}

describe('webhook secrets, operator side', () => {
  it('refuses add and run without WEBHOOK_SECRET_KEY, and the writer and reader roles for the CLI', async () => {
    const add = await cli(['add', receiver.url, '--all'], { WEBHOOK_SECRET_KEY: '' });
    expect(add.code).not.toBe(0);
    expect(add.stderr).toMatch(/WEBHOOK_SECRET_KEY/);
    const run = await cli(['run'], { WEBHOOK_SECRET_KEY: '' });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/WEBHOOK_SECRET_KEY/);
    const short = await cli(['add', receiver.url, '--all'], { WEBHOOK_SECRET_KEY: 'c2hvcnQ=' });
    expect(short.code).not.toBe(0);
    expect(short.stderr).toMatch(/WEBHOOK_SECRET_KEY must be 32 bytes/);
    expect(short.stderr).not.toContain('c2hvcnQ=');
    for (const url of [db.writerUrl, db.readerUrl]) {
      const list = await cli(['list'], { DATABASE_URL: url });
      expect(list.code).not.toBe(0);
      expect(list.stderr).toMatch(/permission denied/);
    }
  }, 60_000);

  it('seals the secret at add, signs with it, and after a rekey signs without the old key', async () => {
    const added = await cli(['add', receiver.url, '--all', '--json']);
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    const endpoint = JSON.parse(added.stdout) as { id: number; secret: string };
    const sealed = await stored(endpoint.id);
    expect(isSealedSecret(sealed)).toBe(true);
    expect(sealed).not.toContain(endpoint.secret.slice(6));

    await deliverVerified(endpoint, 100, {});

    // Rotation: K2 current, K1 kept only to open; rekey; then K1 removed.
    const rekey = await cli(['rekey'], { WEBHOOK_SECRET_KEY: K2, WEBHOOK_SECRET_KEYS: K1 });
    expect(rekey.stderr).toBe('');
    expect(rekey.code).toBe(0);
    expect(rekey.stdout).toMatch(
      /^1 signing secret sealed again under key [0-9a-f]{8}; every secret is under it/,
    );
    const resealed = await stored(endpoint.id);
    expect(resealed).not.toBe(sealed);
    expect(resealed.split(':')[1]).not.toBe(sealed.split(':')[1]);
    await deliverVerified(endpoint, 200, { WEBHOOK_SECRET_KEY: K2 });

    // A plaintext secret (a row from before encryption): list warns; the deliverer seals it and signs.
    await migrator.query(`update ${db.schema}.webhook_secrets set secret = $2 where endpoint_id = $1`, [
      endpoint.id,
      endpoint.secret,
    ]);
    const list = await cli(['list'], { WEBHOOK_SECRET_KEY: '' });
    expect(list.code).toBe(0);
    expect(list.stderr).toMatch(/1 signing secret is still plaintext/);
    await deliverVerified(endpoint, 300, { WEBHOOK_SECRET_KEY: K2 });
    await waitFor('the plaintext secret sealed', async () => isSealedSecret(await stored(endpoint.id)));
    expect(await stored(endpoint.id)).not.toContain(endpoint.secret.slice(6));
  }, 120_000);
});
