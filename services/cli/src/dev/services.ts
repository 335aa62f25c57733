import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Logger } from '@vault-yield/common';
import { jarVersion, startLocalKafka, stopLocalKafka } from '../../../../infra/kafka/index.js';
import { ensureProjectDatabase, ROLES, redact } from '../../../../infra/postgres/index.js';

const pom = fileURLToPath(new URL('../../../../infra/kafka/pom.xml', import.meta.url));

/** Something `dev` started and must stop on the way out. */
export type Stop = () => Promise<void>;

/** Kafka from KAFKA_BROKERS, else the local KRaft runner (fetching its jars on first use). */
export async function ensureKafka(
  log: Logger,
  env: NodeJS.ProcessEnv,
): Promise<{ brokers: string[]; stop: Stop }> {
  if (env.KAFKA_BROKERS)
    return { brokers: env.KAFKA_BROKERS.split(',').map((b) => b.trim()), stop: async () => {} };
  if (!jarVersion()) {
    log.info('fetching the Kafka jars with Maven (first run only)');
    execFileSync('mvn', ['-q', '-f', pom, 'dependency:copy-dependencies'], { stdio: 'inherit' });
  }
  const kafka = await startLocalKafka();
  log.info({ brokers: kafka.brokers, version: kafka.version, started: kafka.started }, 'kafka ready');
  return {
    brokers: kafka.brokers,
    stop: kafka.started ? async () => void (await stopLocalKafka()) : async () => {},
  };
}

/** The project database with its roles, on DATABASE_ADMIN_URL or the machine's cluster. */
export async function ensureDatabase(log: Logger, env: NodeJS.ProcessEnv) {
  const adminUrl = env.DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const db = await ensureProjectDatabase(adminUrl, env.DATABASE_NAME ?? 'vault_yield_dev');
  log.info({ writer: redact(db.writerUrl), reader: redact(db.readerUrl) }, 'postgres ready');
  return { ...db, readerRole: ROLES.reader };
}
