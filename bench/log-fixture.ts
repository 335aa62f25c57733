import { randomBytes } from 'node:crypto';
import {
  dropDatabase,
  ensureProjectDatabase,
  ensureRoles,
  type ProjectDatabase,
  ROLES,
} from '@vault-yield/devstack/postgres';
import { DEFAULT_RECORD_ENCODING, type RecordEncoding } from '@vault-yield/domain';
import { createLogAdmin, createPublisher, type LogAdmin } from '@vault-yield/log';
import { createPgPool, migrate } from '@vault-yield/store';
import { createHistoryGenerator } from '@vault-yield/test-kit/history';
import { resolveKafka, resolvePostgres } from '@vault-yield/test-kit/services';

/**
 * BENCH_RECORDS_PER_VAULT_BLOCK (default 1): a busy vault's records per block (all valued at the
 * block's end, only the last `lastInBlock`), as the indexer writes them; see the generator.
 */
export const PER_VAULT_BLOCK = Number(process.env.BENCH_RECORDS_PER_VAULT_BLOCK ?? 1);

/** BENCH_RECORD_ENCODING (default binary, as the indexer writes): `json` produces the earlier encoding. */
export const ENCODING: RecordEncoding =
  process.env.BENCH_RECORD_ENCODING === 'json' ? 'json' : DEFAULT_RECORD_ENCODING;

/** A fresh project database named after the bench, migrated in `schema`. */
export async function createBenchDatabase(
  adminUrl: string,
  name: string,
  schema: string,
): Promise<ProjectDatabase> {
  await ensureRoles(adminUrl);
  const db = await ensureProjectDatabase(adminUrl, `bench_${name}_${randomBytes(4).toString('hex')}`);
  const migratePool = createPgPool({ url: db.writerUrl, applicationName: 'bench-migrate', max: 1 });
  await migrate(migratePool, schema, ROLES.reader).finally(() => migratePool.end());
  return db;
}

export interface LogFixture {
  brokers: string[];
  adminUrl: string;
  topic: string;
  db: ProjectDatabase;
  admin: LogAdmin;
  produceSeconds: number;
  /** Deletes the topic and drops the database unless `keep`, and stops what was started. */
  close(keep: boolean): Promise<void>;
}

/**
 * What the projector and rebuild benches share: Kafka and Postgres found the way the tests find
 * them, a fresh database migrated in `schema`, and a fresh topic holding `records` generated
 * records for `vaults` vaults (produced in chunks, so the generator never holds the history).
 */
export async function createLogFixture(o: {
  name: string;
  records: number;
  vaults: number;
  partitions: number;
  seed: number;
  schema: string;
}): Promise<LogFixture> {
  const [kafka, postgres] = await Promise.all([resolveKafka(), resolvePostgres()]);
  console.log(`kafka: ${kafka.description}; postgres: ${postgres.description}`);
  const brokers = kafka.url.split(',');
  // BENCH_TOPIC: a topic a kept run (BENCH_KEEP=true) produced with the same options, read again.
  const reused = process.env.BENCH_TOPIC;
  const topic = reused ?? `bench-${o.name}-${Date.now().toString(36)}`;
  const db = await createBenchDatabase(postgres.url, o.name, o.schema);
  const admin = await createLogAdmin({ brokers, clientId: 'bench-admin' });
  let produceSeconds = 0;
  if (reused) console.log(`reading the kept topic ${topic} (BENCH_TOPIC)`);
  else {
    await admin.ensureTopic({ topic, partitions: o.partitions });
    const publisher = await createPublisher({
      brokers,
      clientId: 'bench-publisher',
      topic,
      encoding: ENCODING,
    });
    const gen = createHistoryGenerator({
      vaults: o.vaults,
      seed: o.seed,
      recordsPerVaultBlock: PER_VAULT_BLOCK,
    });
    const t0 = performance.now();
    for (let done = 0; done < o.records; ) {
      const n = Math.min(50_000, o.records - done);
      await publisher.publish(gen.take(n));
      done += n;
    }
    await publisher.close();
    produceSeconds = (performance.now() - t0) / 1000;
    console.log(
      `produced ${o.records} ${ENCODING} records for ${o.vaults} vaults (${PER_VAULT_BLOCK} a vault per block) in ${produceSeconds.toFixed(1)} s (topic ${topic})`,
    );
  }
  return {
    brokers,
    adminUrl: postgres.url,
    topic,
    db,
    admin,
    produceSeconds,
    async close(keep) {
      if (!keep) {
        if (!reused) await admin.deleteTopic(topic).catch(() => {});
        await dropDatabase(postgres.url, db.database).catch(() => {});
      }
      await admin.close();
      await Promise.all([kafka.stop(), postgres.stop()]);
    },
  };
}
