import { ROLES } from '@vault-yield/devstack/postgres';
import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { switchLive } from '../admin/switch.js';
import { migrate, migrations } from '../migrations/index.js';
import { createPgPool, type Pool } from '../pool/index.js';
import { createWebhookStore, webhookSecretsStatus } from './index.js';
import { isSealedSecret, openSecret, webhookSecretKeys } from './secrets.js';

/**
 * Issue #42 item 3: no serving role reads a webhook secret, whatever options each migrate got,
 * and what the database keeps of a secret cannot sign without WEBHOOK_SECRET_KEY. Real Postgres,
 * the production layout (migrator owns; writer, reader, webhooks roles of their own).
 */
let db: TestDatabase;
let migrator: Pool;
const KEY = Buffer.alloc(32, 7).toString('base64');
const OTHER = Buffer.alloc(32, 9).toString('hex');
const SECRET = `whsec_${Buffer.alloc(24, 3).toString('base64')}`;

beforeAll(async () => {
  db = await createTestDatabase('webhook_secrets', { split: true });
  migrator = createPgPool({ url: db.migratorUrl, applicationName: 'webhook-secrets-test', max: 2 });
});
afterAll(async () => {
  await migrator?.end();
  await db?.drop();
});

const upTo19 = () => migrations().filter((m) => m.version <= 19);

/** The upgrade paths from 0019: each ends at the latest migration. */
const PATHS: Record<string, (schema: string) => Promise<void>> = {
  // The case: 0019 migrated with READER_ROLE (default privileges: the reader selects every
  // new table), then `migrate` without it creates the webhook tables.
  'to 0019 with READER_ROLE, then without': async (s) => {
    await migrate(migrator, s, ROLES.reader, { migrations: upTo19(), writerRole: ROLES.writer });
    await migrate(migrator, s);
  },
  'to 0019 without, then with READER_ROLE': async (s) => {
    await migrate(migrator, s, undefined, { migrations: upTo19() });
    await migrate(migrator, s, ROLES.reader, { writerRole: ROLES.writer });
  },
  fresh: async (s) => {
    await migrate(migrator, s, ROLES.reader, { writerRole: ROLES.writer });
  },
  // A database of the last build: secrets plaintext in webhook_endpoints (0020–0024), migrated
  // with the roles, then to the latest without them.
  'to 0024 with an endpoint, then without options': async (s) => {
    await migrate(migrator, s, ROLES.reader, {
      migrations: migrations().filter((m) => m.version <= 24),
      writerRole: ROLES.writer,
    });
    await migrator.query(
      `insert into ${s}.webhook_endpoints (url, secret, ledger_schema, cursor_xid)
       values ('http://127.0.0.1:9/old', $1, $2, '0'::xid8)`,
      [SECRET, s],
    );
    await migrate(migrator, s);
  },
};

/** Runs `sql` as `url`'s role; the Postgres error code it fails with (null: it did not). */
async function codeOf(url: string, sql: string): Promise<string | null> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    // Read write even for the reader (read-only by default): the privilege is what is tested.
    await c.query('begin read write');
    await c.query(sql);
    await c.query('rollback');
    return null;
  } catch (e) {
    return (e as { code?: string }).code ?? 'unknown';
  } finally {
    await c.end();
  }
}

/** Every way a serving role could reach a secret or make an endpoint, refused for it. */
async function expectRefused(url: string, s: string): Promise<void> {
  for (const sql of [
    `select secret from ${s}.webhook_secrets`,
    `select * from ${s}.webhook_endpoints`,
    `select * from ${s}.webhook_deliveries`,
    `insert into ${s}.webhook_secrets (endpoint_id, secret) values (1, 'x')`,
    `insert into ${s}.webhook_endpoints (url, ledger_schema, cursor_xid) values ('http://x', '${s}', '0'::xid8)`,
  ])
    expect(await codeOf(url, sql), sql).toBe('42501');
}

describe('webhook secrets by role, for every upgrade path from 0019', () => {
  for (const [name, path] of Object.entries(PATHS)) {
    it(`${name}: the reader and the writer are refused, the webhooks role reads`, async () => {
      const s = `ws_${Object.keys(PATHS).indexOf(name)}`;
      await path(s);
      await expectRefused(db.readerUrl, s);
      await expectRefused(db.writerUrl, s);
      expect(await codeOf(db.webhooksUrl, `select secret from ${s}.webhook_secrets`)).toBeNull();
      expect(await codeOf(db.webhooksUrl, `select url from ${s}.webhook_endpoints`)).toBeNull();
      // A migrate again, with every option, grants nothing of them back.
      await migrate(migrator, s, ROLES.reader, { writerRole: ROLES.writer });
      await expectRefused(db.readerUrl, s);
      await expectRefused(db.writerUrl, s);
      // The secret column is gone from the endpoints: nothing to read there.
      const { rows } = await migrator.query<{ n: number }>(
        `select count(*)::int as n from information_schema.columns
          where table_schema = $1 and table_name = 'webhook_endpoints' and column_name = 'secret'`,
        [s],
      );
      expect(rows[0]?.n).toBe(0);
    });
  }

  it('keeps an old plaintext secret through 0025, and the store seals it under the key', async () => {
    const s = `ws_${Object.keys(PATHS).indexOf('to 0024 with an endpoint, then without options')}`;
    const stored = async () =>
      (await migrator.query<{ secret: string }>(`select secret from ${s}.webhook_secrets`)).rows[0]?.secret;
    expect(await stored()).toBe(SECRET);
    const keys = webhookSecretKeys(KEY);
    const store = createWebhookStore(migrator, s, keys);
    expect(await store.secretsState()).toEqual({ plaintext: 1, sealed: {} });
    expect(await store.sealPlaintext()).toBe(1);
    expect(await store.sealPlaintext()).toBe(0);
    const sealed = (await stored()) ?? '';
    expect(isSealedSecret(sealed)).toBe(true);
    expect(sealed).not.toContain(SECRET.slice(6));
    expect(openSecret(sealed, keys)).toBe(SECRET);
    expect(await store.secretsState()).toEqual({ plaintext: 0, sealed: { [keys.current.id]: 1 } });
  });

  it('a switch to a new schema grants its readers and writers no webhook table', async () => {
    const views = 'ws_views';
    const target = 'ws_switched';
    await migrate(migrator, target);
    await switchLive(migrator, {
      viewsSchema: views,
      target,
      readerRole: ROLES.reader,
      writerRole: ROLES.writer,
    });
    await expectRefused(db.readerUrl, target);
    await expectRefused(db.writerUrl, target);
    expect(await codeOf(db.readerUrl, `select * from ${views}.webhook_secrets`)).toBe('42P01');
  });
});

describe('webhook secrets at rest', () => {
  it('a new endpoint is stored sealed: not the secret, opened only with the key; rekey moves it to a new key', async () => {
    const s = 'ws_rest';
    await migrate(migrator, s, ROLES.reader, { writerRole: ROLES.writer });
    const old = webhookSecretKeys(KEY);
    const webhooks = createPgPool({ url: db.webhooksUrl, applicationName: 'webhook-secrets-test', max: 1 });
    try {
      const e = await createWebhookStore(webhooks, s, old).addEndpoint({
        url: 'http://127.0.0.1:9/hook',
        secret: SECRET,
        vaults: null,
        types: null,
        ledgerSchema: s,
      });
      // What a dump of the table holds.
      const dump = async () =>
        (
          await migrator.query<{ secret: string }>(
            `select secret from ${s}.webhook_secrets where endpoint_id = $1`,
            [e.id],
          )
        ).rows[0]?.secret ?? '';
      const first = await dump();
      expect(first).toMatch(new RegExp(`^v1:${old.current.id}:[\\w-]+:[\\w-]+:[\\w-]+$`));
      expect(first).not.toContain(SECRET);
      expect(first).not.toContain(SECRET.slice(6));
      expect(openSecret(first, old)).toBe(SECRET);
      expect(() => openSecret(first, webhookSecretKeys(OTHER))).toThrow(/not configured/);
      // A nonce per secret: the same secret seals differently each time.
      const again = await createWebhookStore(webhooks, s, old).addEndpoint({
        url: 'http://127.0.0.1:9/hook2',
        secret: SECRET,
        vaults: null,
        types: null,
        ledgerSchema: s,
      });
      const second = (
        await migrator.query<{ secret: string }>(
          `select secret from ${s}.webhook_secrets where endpoint_id = $1`,
          [again.id],
        )
      ).rows[0]?.secret;
      expect(second).not.toBe(first);

      // Rotation: the new key current, the old one only opening; rekey seals both under the new.
      const rotated = webhookSecretKeys(OTHER, [KEY]);
      expect(await createWebhookStore(webhooks, s, rotated).rekey()).toBe(2);
      const after = await dump();
      expect(after.startsWith(`v1:${rotated.current.id}:`)).toBe(true);
      expect(openSecret(after, webhookSecretKeys(OTHER))).toBe(SECRET);
      expect(() => openSecret(after, old)).toThrow(/not configured/);
      expect(await createWebhookStore(webhooks, s, rotated).rekey()).toBe(0);
      // Without the key the store refuses to seal or rekey.
      await expect(createWebhookStore(webhooks, s).rekey()).rejects.toThrow(/WEBHOOK_SECRET_KEY/);
    } finally {
      await webhooks.end();
    }
  });
});

describe('webhookSecretsStatus (vault-yield status) on every layout', () => {
  it('before 0025 the plaintext secrets of webhook_endpoints are counted (and said where), after it those of webhook_secrets', async () => {
    const s = 'ws_status_0024';
    await migrate(migrator, s, ROLES.reader, {
      migrations: migrations().filter((m) => m.version <= 24),
      writerRole: ROLES.writer,
    });
    expect(await webhookSecretsStatus(migrator, s)).toEqual({
      readable: true,
      plaintext: 0,
      sealed: 0,
      table: 'webhook_endpoints',
    });
    await migrator.query(
      `insert into ${s}.webhook_endpoints (url, secret, ledger_schema, cursor_xid)
       values ('http://127.0.0.1:9/old', $1, $2, '0'::xid8)`,
      [SECRET, s],
    );
    expect(await webhookSecretsStatus(migrator, s)).toEqual({
      readable: true,
      plaintext: 1,
      sealed: 0,
      table: 'webhook_endpoints',
    });
    await migrate(migrator, s);
    expect(await webhookSecretsStatus(migrator, s)).toEqual({
      readable: true,
      plaintext: 1,
      sealed: 0,
      table: 'webhook_secrets',
    });
    // Before 0019's webhook tables: nothing to say.
    await migrate(migrator, 'ws_status_0019', undefined, { migrations: upTo19() });
    expect(await webhookSecretsStatus(migrator, 'ws_status_0019')).toBeNull();
  });
});
