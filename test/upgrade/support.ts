import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { createPublisher } from '@vault-yield/log';
import { migrations, type Pool } from '@vault-yield/store';
import { kafkaBrokers } from '@vault-yield/test-kit';
import { projector } from '../projector/support.js';

/**
 * The fixture the build of 011753e wrote (fixtures/README.md): a schema at migration 0027 and its
 * log, and how the upgrade tests load them.
 */

/** The topic the fixture's rows name (rewritten to the test's own topic). */
const OLD_TOPIC = 'vault-yield-upgrade-0027';

/** The fixture's log: what the old schema folded, and what it had not yet read. */
export interface RawLog {
  topic: string;
  folded: { key: string; value: string }[];
  rest: { key: string; value: string }[];
}

const fixture = (name: string) => gunzipSync(readFileSync(new URL(`fixtures/${name}`, import.meta.url)));

export function fixtureLog(): RawLog {
  return JSON.parse(fixture('0027-single-chain.log.json.gz').toString()) as RawLog;
}

/** The fixture's rows as SQL for `schema`, on `topic`: pg_dump's INSERTs and setvals, nothing of its session settings. */
function fixtureSql(schema: string, topic: string): string {
  return (
    fixture('0027-single-chain.sql.gz')
      .toString()
      .split('\n')
      // fold_meta's one row is the migrations' own (0015/0016/0023: fold version 4, as dumped).
      .filter(
        (l) =>
          (l.startsWith('INSERT INTO ') && !l.startsWith('INSERT INTO vault_yield.fold_meta ')) ||
          l.startsWith('SELECT pg_catalog.setval('),
      )
      .join('\n')
      .replaceAll('vault_yield.', `${schema}.`)
      .replaceAll(`'${OLD_TOPIC}'`, `'${topic}'`)
  );
}

/**
 * The old schema: migrations up to 0027 as the build before applied them, then the fixture's rows
 * (reading `topic`).
 */
export async function createOldSchema(pool: Pool, schema: string, topic: string): Promise<void> {
  await pool.query(`create schema ${schema}`);
  const c = await pool.connect();
  try {
    await c.query(`set search_path to ${schema}`);
    await c.query(
      'create table schema_migrations (version integer primary key, name text not null, applied_at timestamptz not null default now(), checksum text)',
    );
    for (const m of migrations().filter((m) => m.version <= 27)) {
      await c.query(m.sql);
      await c.query('insert into schema_migrations (version, name, checksum) values ($1, $2, $3)', [
        m.version,
        m.name,
        m.checksum,
      ]);
    }
  } finally {
    c.release();
  }
  await pool.query(fixtureSql(schema, topic));
}

/** Publishes the fixture's messages as they were written (their bytes, not re-encoded). */
export async function publishRaw(topic: string, messages: RawLog['folded']): Promise<void> {
  const publisher = await createPublisher({ brokers: kafkaBrokers(), clientId: 'upgrade-test', topic });
  try {
    await publisher.publishRaw(messages.map((m) => ({ key: m.key, value: Buffer.from(m.value, 'base64') })));
  } finally {
    await publisher.close();
  }
}

/** Folds `topic` into `schema` with this build's projector until caught up. */
export async function foldTopic(url: string, schema: string, topic: string, group: string): Promise<void> {
  const p = projector({ brokers: kafkaBrokers(), url, schema, topic, group });
  await p.start();
  try {
    await p.caughtUp();
  } finally {
    await p.stop();
  }
}
